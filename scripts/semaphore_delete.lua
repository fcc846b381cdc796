#!lua flags=allow-oom
-- SemaphoreDelete removes a semaphore and its permit count, as Redisson's
-- RSemaphore.delete does. The record of the TrySetPermits that set the count
-- stays until it expires, so that call, made again after its reply was lost,
-- still answers as it did and sets nothing.
-- Waiters keep waiting: a deleted semaphore has no permits until set again.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the count may be one another caller set after the first attempt).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- A call that deletes the count leaves a mark of its own (its record's
-- name) under the deleted key for recordTTL, as long as the records of the
-- acquisitions made before it live, each of which holds the mark it found
-- (SemaphoreAcquire): the undo of one that finds another mark there
-- (SemaphoreUndo) gives nothing back to a count set since, which those
-- permits were never taken from.
-- Reply true: there was a semaphore; false: none.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE: nothing is deleted, since that would
-- end another owner's lock (Redisson's delete deletes it).
-- @key    semaphore
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @key    deleted   redisson_sc_latch:{name}:deleted, the mark of the last Delete
-- @arg    recordTTL duration
-- @arg    slack     duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return bool
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @retryable
-- @error  LATE      the call reached the server after its reservation ended; nothing changed
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
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[2]) < tonumber(ARGV[2]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  return tonumber(seen)
end
local value = redis.call('get', KEYS[1])
if value and not permits(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local n = redis.call('del', KEYS[1])
redis.call('set', KEYS[2], n, 'px', ARGV[1])
if n == 1 then
  redis.call('set', KEYS[3], KEYS[2], 'px', ARGV[1])
end
return n
