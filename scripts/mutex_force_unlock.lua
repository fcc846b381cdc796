#!lua flags=allow-oom
-- MutexForceUnlock deletes a lock whoever holds it and wakes its waiters:
-- Redisson's with "0", and the longest-registered Go waiter as MutexRelease
-- does.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the lock may be another owner's, taken after the first attempt freed it).
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    record    redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return bool
-- @retryable
-- @commands publish spublish
local seen = redis.call('get', KEYS[5])
if seen then
  return tonumber(seen)
end
local deleted = redis.call('del', KEYS[1])
redis.call('set', KEYS[5], deleted, 'px', ARGV[2])
if deleted == 0 then
  return 0
end
redis.call(ARGV[1], KEYS[2], '0')
local w = redis.call('zpopmin', KEYS[3])
if w[1] then
  redis.call(ARGV[1], KEYS[4] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1])
end
return 1
