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
-- permits reads a semaphore's count: an integer INCRBY takes (no '+', no
-- leading zero, within 64 bits), or a float Redisson's addPermits writes for
-- a sum of 10^17 or more either way ("1e+17", "-1.2345678901234568e+17",
-- "9223372036854776000"); nil for any other string, which holds no count.
-- Lua's tonumber also reads "nan", "inf", "2.5", "0x10", "1e3", " 2" and
-- "007" ("nan" as -2^63).
local function permits(v)
  local sign, d = string.match(v, '^(-?)([1-9]%d*)$')
  if d then
    local max = (sign == '-') and '9223372036854775808' or '9223372036854775807'
    if #d < 19 or (#d == 19 and d <= max) then
      return tonumber(v)
    end
    -- Past 64 bits: a float sum as Redis 7.2 and newer (and Valkey) write
    -- one past 2^62, its shortest digits (17 at most) and up to 7 zeros
    -- ("9223372036854776000"; Redis 7.0 writes "9.2233720368547758e+18").
    if #d <= 24 and #string.match(d, '^(.-)0*$') <= 17 then
      return tonumber(v)
    end
  elseif v == '0' then
    return 0
  elseif string.match(v, '^-?[1-9]e%+%d%d%d?$') or string.match(v, '^-?[1-9]%.%d*[1-9]e%+%d%d%d?$') then
    -- Below 10^17 Redis writes a sum's digits; "1e+400" reads as infinite.
    local n = math.abs(tonumber(v))
    if n >= 100000000000000000 and n < math.huge then
      return tonumber(v)
    end
  end
  return nil
end
local value = redis.call('get', KEYS[1])
if value and not permits(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zcount', KEYS[2], '0', now)
-- A lease end below 0 (a Redisson lease near Long.MAX_VALUE ms wraps there)
-- is reclaimed by nobody (every client reclaims 0 to now): held for good.
local held = redis.call('zcount', KEYS[2], '(' .. now, '+inf') + redis.call('zcount', KEYS[2], '-inf', '(0')
return {math.min(tonumber(value or '0') + expired, 9007199254740991), held}
