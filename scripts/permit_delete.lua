#!lua flags=allow-oom
-- PermitDelete removes an expirable-permit semaphore: its free-permit count
-- and its held permits, as Redisson's RPermitExpirableSemaphore.delete does,
-- and the record of the TrySetPermits that set it. Permits held before can
-- no longer be released or extended.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the count may be one another caller set after the first attempt).
-- Reply true: there was something to delete; false: nothing.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    trySet    redisson_sc_latch:{name}:set
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @arg    recordTTL duration
-- @return bool
-- @retryable
local seen = redis.call('get', KEYS[4])
if seen then
  return tonumber(seen)
end
local n = 0
if redis.call('del', KEYS[1], KEYS[2]) > 0 then
  n = 1
end
redis.call('del', KEYS[3])
redis.call('set', KEYS[4], n, 'px', ARGV[1])
return n
