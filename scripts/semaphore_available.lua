-- SemaphoreAvailable reads how many permits are available (0 when the
-- semaphore was never set).
-- @key    semaphore
-- @return int64
-- @readonly
return tonumber(redis.call('get', KEYS[1]) or '0')
