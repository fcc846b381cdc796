-- RwForceUnlock deletes a read-write lock whoever holds it and publishes "0".
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel        redisson_rwlock:{name}
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call(ARGV[1], KEYS[2], '0')
return 1
