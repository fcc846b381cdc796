#!lua flags=allow-oom
-- PermitDelete removes an expirable-permit semaphore: its free-permit count
-- and its held permits, as Redisson's RPermitExpirableSemaphore.delete does,
-- and the record of the TrySetPermits that set it. Permits held before can
-- no longer be released or extended. Reply true: there was something to
-- delete; false: nothing.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    record    redisson_sc_latch:{name}:set
-- @return bool
local n = redis.call('del', KEYS[1], KEYS[2])
redis.call('del', KEYS[3])
return n > 0 and 1 or 0
