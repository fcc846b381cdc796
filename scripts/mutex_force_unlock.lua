-- MutexForceUnlock deletes a lock whoever holds it and wakes its waiters.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2], '0')
  return 1
end
return 0
