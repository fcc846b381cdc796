#!lua flags=allow-oom
-- RwForceUnlock deletes a read-write lock whoever holds it and publishes
-- Redisson's message for the mode it deleted: "1" for a write lock (every
-- waiter retries, as RedissonWriteLock.forceUnlock), "0" for a read lock (as
-- RedissonReadLock.forceUnlock). Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel        redisson_rwlock:{name}
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
local mode = redis.call('hget', KEYS[1], 'mode')
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
if mode == 'write' then
  redis.call(ARGV[1], KEYS[2], '1')
else
  redis.call(ARGV[1], KEYS[2], '0')
end
return 1
