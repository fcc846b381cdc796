#!lua
-- SemaphoreDrain sets a semaphore's count to 0, as Redisson's drainPermits
-- does, and returns what the count was: the permits taken when it was
-- positive; a zero or negative count (a deficit AddPermits left) is reset to
-- 0 too and returned as it was. A count past 2^53 - 1 (only another client
-- sets one) is drained whole and answered as 2^53 - 1. A semaphore never set
-- is left unset (reply 0).
-- The key's TTL, if any, is dropped, as by Redisson's SET: a counter
-- trySetPermits(n, ttl) gave an expiry outlives the drain on either side,
-- and does not expire with permits still held out. The call records its reply under its own
-- key for recordTTL: made again after its reply was lost, or reaching the
-- server after such a retry, it answers that reply and drains nothing more
-- (0 once the drain was given back, SemaphoreUndo on its record). A drain
-- that took permits records them as an acquisition does, "<n>:<mark>", with
-- the mark of the last Delete (SemaphoreDelete), so that a give-back that
-- reaches the server after a later Delete gives nothing to a count set since
-- (a repeat, renewing the record, renews that Delete's mark as long).
-- The record is reserved first (RecordReserveStrict) for as long as the
-- caller waits: a call reaching the server after that, its caller gone,
-- finds no record (or less of the reservation left than slack, the time the
-- reservation took to be answered, by which it may outlast the deadline),
-- fails with LATE and drains nothing: the permits released since are left
-- to the others.
-- A key that holds no count (a LeanMutex under the same name) fails with
-- NOT_COUNT and is left alone: setting it to 0 would take the lock from its
-- holder. (Other kinds' keys are hashes: GET fails with WRONGTYPE.)
-- @key    semaphore
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @key    deleted   redisson_sc_latch:{name}:deleted, the mark of the last Delete
-- @arg    recordTTL duration
-- @arg    slack     duration  how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @retryable
-- @error  LATE       the call reached the server after its reservation ended; nothing changed
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
local seen = redis.call('get', KEYS[2])
if not seen or (seen == '' and redis.call('pttl', KEYS[2]) < tonumber(ARGV[2])) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  -- A repeat renews the record: a write, after the drain's in the
  -- replication stream, so the failover guard's WAIT sent with it covers
  -- the drain. A drain given back since (SemaphoreUndo: "undone:<n>") took
  -- nothing.
  redis.call('pexpire', KEYS[2], ARGV[1])
  if string.match(seen, '^undone') then
    return 0
  end
  -- The permits the drain took can be given back through the record for as
  -- long as it now lives: the mark of a Delete made since (another than
  -- the one recorded) must live as long, or that give-back would find none
  -- and add them to a count set after the Delete.
  if string.find(seen, ':', 1, true) then
    local left = redis.call('pttl', KEYS[3])
    if left >= 0 and left < tonumber(ARGV[1]) then
      redis.call('pexpire', KEYS[3], ARGV[1])
    end
  end
  return math.min(tonumber(string.match(seen, '^(-?%d+)')), 9007199254740991)
end
local value = redis.call('get', KEYS[1])
if not value then
  redis.call('set', KEYS[2], '0', 'px', ARGV[1])
  return 0
end
if not permits(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
redis.call('set', KEYS[1], '0')
-- Recorded as an integer INCRBY takes, which the give-back adds back and a
-- repeat answers: a float (Redisson's addPermits writes a sum of 10^17 or
-- more either way as one, "1.152921504606847e+18") as the integer it
-- stands for, 2^63 and beyond as 2^63 - 1, -2^63 and below as -2^63 (also
-- one Redis 7.2 and newer write past 64 bits as digits and zeros,
-- "9223372036854776000"). Read back from the float itself, a repeat
-- answered its leading digits ("-1e+17": -1).
local taken = value
local n = permits(value)
if not string.match(value, '^-?%d+$') or n >= 9223372036854775807 or n <= -9223372036854775808 then
  if n >= 9223372036854775807 then
    taken = '9223372036854775807'
  elseif n > -9223372036854775808 then
    taken = string.format('%d', n)
  else
    taken = '-9223372036854775808'
  end
end
if tonumber(taken) > 0 then
  redis.call('set', KEYS[2], taken .. ':' .. (redis.call('get', KEYS[3]) or ''), 'px', ARGV[1])
else
  redis.call('set', KEYS[2], taken, 'px', ARGV[1])
end
-- Answered as SemaphoreAvailable reads it: a count past 2^53 - 1 (another
-- client's) is not a Lua integer, and near 2^63 its reply would wrap to -2^63.
return math.min(tonumber(taken), 9007199254740991)
