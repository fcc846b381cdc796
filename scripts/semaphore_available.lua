-- SemaphoreAvailable reads how many permits are available (0 when the
-- semaphore was never set).
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @readonly
local value = redis.call('get', KEYS[1])
if value and not tonumber(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
return tonumber(value or '0')
