#!lua
-- SemaphoreAcquire takes n permits if that many are available. A taken
-- attempt is recorded under its latch key for latchTTL, as "<n>:<mark>",
-- the mark of the last Delete (SemaphoreDelete; empty when none is
-- recorded), so an attempt whose reply was lost can be undone exactly once
-- (SemaphoreUndo), and not into a count set after a later Delete; an
-- attempt that arrives after its undo finds the latch and takes nothing.
-- Reply {1, left}: taken, left = permits still available;
-- {0, available}: not enough permits (or undone already), nothing changed.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    latch     redisson_sc_latch:{name}:<client-id>:<n>, this attempt's record
-- @key    deleted   redisson_sc_latch:{name}:deleted, the mark of the last Delete
-- @arg    n         int64
-- @arg    latchTTL  duration
-- @return {ok int64, permits int64}
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
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
value = tonumber(value or '0')
if redis.call('exists', KEYS[2]) == 1 then
  return {0, value}
end
local n = tonumber(ARGV[1])
if value >= n then
  -- The count first: one DECRBY refuses (not an integer: Redisson's
  -- addPermits writes a sum of 10^17 or more as a float) fails the call here with
  -- nothing written, its record neither.
  local left = redis.call('decrby', KEYS[1], ARGV[1])
  redis.call('set', KEYS[2], ARGV[1] .. ':' .. (redis.call('get', KEYS[3]) or ''), 'px', ARGV[2])
  return {1, left}
end
return {0, value}
