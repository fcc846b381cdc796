#!lua flags=allow-oom
-- MutexForceUnlock deletes a lock whoever holds it and wakes its waiters:
-- Redisson's with "0", and the longest-registered Go waiter as MutexRelease
-- does.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2], '0')
  local w = redis.call('zpopmin', KEYS[3])
  if w[1] then
    redis.call(ARGV[1], KEYS[4] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1])
  end
  return 1
end
return 0
