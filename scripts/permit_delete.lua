#!lua flags=allow-oom
-- PermitDelete removes an expirable-permit semaphore: its free-permit count
-- and its held permits, as Redisson's RPermitExpirableSemaphore.delete does.
-- Permits held before can no longer be released or extended. Reply true:
-- there was something to delete; false: nothing.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @return bool
return redis.call('del', KEYS[1], KEYS[2]) > 0 and 1 or 0
