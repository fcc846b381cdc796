-- PermitState reads an expirable semaphore without changing it: the permits
-- free now (the counter plus the held permits whose lease has ended, which
-- the next call returns to the pool) and the permits held under a lease that
-- has not ended, by the server clock. Permits free past 2^53 - 1 (another
-- client's count) read as 2^53 - 1: the reply goes through a Lua number, and
-- one that rounds to 2^63 came back as -2^63.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @return {available int64, held int64}
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @readonly
local value = redis.call('get', KEYS[1])
if value and not tonumber(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zcount', KEYS[2], '0', now)
-- A lease end below 0 (a Redisson lease near Long.MAX_VALUE ms wraps there)
-- is reclaimed by nobody (every client reclaims 0 to now): held for good.
local held = redis.call('zcount', KEYS[2], '(' .. now, '+inf') + redis.call('zcount', KEYS[2], '-inf', '(0')
return {math.min(tonumber(value or '0') + expired, 9007199254740991), held}
