#!lua flags=allow-oom
-- PermitRelease returns a permit to an expirable semaphore's pool and
-- publishes the new count so waiters retry (always, as Redisson's tryRelease).
-- The call records its outcome under its latch key for latchTTL: made again
-- after its reply was lost, or reaching the server after such a retry, it
-- answers what the first attempt did and changes nothing (the permit is gone
-- from the set by then, so without the record the repeat would report it
-- unknown), but publishes the count again: the first attempt may have failed
-- at its publish, after its writes (a refused SPUBLISH, made again with
-- PUBLISH), and the waiters would not hear of the permit. A call that finds
-- no permit leaves no record.
-- Reply 1: released; 2: released, but its lease had already ended (nobody else
-- took it meanwhile); 0: no such permit (unknown id, released already, or
-- expired and reclaimed), nothing changed.
-- A counter without expiry makes the held permits' set lose its own, as an
-- acquisition does.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    latch     redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    latchTTL  duration
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @commands publish spublish
-- @retryable
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
-- javaCount is a count as a message carries it: a Redisson waiter reads
-- the message as a Long and wakes intValue() of its acquirers, so a count
-- past 2^31 - 1 would wrap to 0 or below and wake none; capped there, it
-- still wakes every one (and a Go waiter as many as it has). Always an
-- integer (a count below -2^31 capped there): a count another client wrote
-- as a float (Redisson's addPermits, past 10^17 either way), which a
-- repeat publishes as it finds it, is no Long, and a Redisson waiter could
-- not read the message.
local function javaCount(v)
  local n = tonumber(v)
  if n ~= n then
    return '0'
  end
  if n > 2147483647 then
    return '2147483647'
  end
  if n < -2147483648 then
    return '-2147483648'
  end
  return string.format('%d', n)
end
-- refusal is the error the publish of this call would fail with after its
-- writes, checked before them (Redis 7's acl_check_cmd) so that a refused
-- release changes nothing: NO_PUBLISH, saying whether the ACL user may not
-- run the publish command at all or may not publish to the channel, which
-- it names (any bytes: a control byte would cut the reply); UNKNOWN_COMMAND
-- when the server has no such command (SPUBLISH renamed away), which the
-- Client makes again with PUBLISH. nil: allowed, or a server before 7.0.
local function refusal(publish, ch)
  if not redis.acl_check_cmd then
    return nil
  end
  local known, allowed = pcall(redis.acl_check_cmd, publish, ch, '0')
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the release message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(publish) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the release message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
  end
  return nil
end
local count = redis.call('get', KEYS[1])
if count and not permits(count) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
-- Read before anything is written: a lease set of another type fails the
-- call here (WRONGTYPE) with nothing written.
local expires = redis.call('zscore', KEYS[2], ARGV[1])
local seen = redis.call('get', KEYS[4])
if seen then
  redis.call(ARGV[2], KEYS[3], javaCount(count or '0'))
  return tonumber(seen)
end
if not expires then
  return 0
end
-- Checked before the writes: a publish refused after them failed the call
-- with the permit given back and the caller told it failed.
local err = refusal(ARGV[2], KEYS[3])
if err then
  return err
end
-- The first write: a count INCR refuses (past 2^63 - 1, or not an integer:
-- Redisson's addPermits writes a sum of 10^17 or more as a float) fails the call
-- here with nothing changed, the permit still held.
local value = redis.call('incr', KEYS[1])
redis.call('zrem', KEYS[2], ARGV[1])
if redis.call('pttl', KEYS[1]) == -1 then
  -- The counter lives on without expiry (Redisson's addPermits, a SET,
  -- dropped its TTL and left the one an acquisition copied to the set):
  -- the permits still held must not vanish with the set.
  redis.call('persist', KEYS[2])
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local status = 1
-- A lease end below 0 (a Redisson lease near Long.MAX_VALUE ms, wrapped) is
-- over for nobody, as PermitAcquire reads it: the permit was held.
if tonumber(expires) >= 0 and tonumber(expires) <= now then
  status = 2
end
-- Recorded before the publish, which may fail: the repeat answers it.
redis.call('set', KEYS[4], status, 'px', ARGV[3])
redis.call(ARGV[2], KEYS[3], javaCount(value))
return status
