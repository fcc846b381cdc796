-- SemaphoreAvailable reads how many permits are available (0 when the
-- semaphore was never set). A count past 2^53 - 1 (another client's) reads
-- as 2^53 - 1: the reply goes through a Lua number, and one that rounds to
-- 2^63 came back as -2^63, a deficit.
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
return math.min(tonumber(value or '0'), 9007199254740991)
