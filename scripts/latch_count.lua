-- LatchCount reads a latch's count (0 when it is not counting). A count past
-- 2^53 - 1 (a Redisson latch counts a long) reads as 2^53 - 1: the reply goes
-- through a Lua number, and one that rounds to 2^63 came back as -2^63,
-- which reads as an open latch.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    latch
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @readonly
-- count reads a latch's value as Redis counts it down (DECR's integers: an
-- optional '-', no leading zero, within 64 bits, and above -2^63, which DECR
-- refuses to lower), nil for any other: Lua's tonumber also reads "nan",
-- "inf", "0x10", "1e3", " 2", "1.5" and values past 64 bits as numbers,
-- which DECR refuses (and "nan" read as -2^63, an open latch).
local function count(v)
  local d = string.match(v, '^-?([1-9]%d*)$')
  if not d then
    if v == '0' then
      return 0
    end
    return nil
  end
  if #d > 19 then
    return nil
  end
  if #d == 19 then
    -- Compared in halves: a double does not hold every 19-digit number.
    local high, low = tonumber(string.sub(d, 1, 10)), tonumber(string.sub(d, 11))
    if high > 9223372036 or (high == 9223372036 and low > 854775807) then
      return nil
    end
  end
  return tonumber(v)
end
local value = redis.call('get', KEYS[1])
local n = value and count(value)
if value and not n then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
return math.min(n or 0, 9007199254740991)
