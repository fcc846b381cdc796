#!lua flags=allow-oom
-- PermitUndo gives back the permit of an acquisition whose reply was lost:
-- it marks the acquisition's record undone for recordTTL, so an attempt of
-- it that reaches the server later takes nothing (PermitAcquire), and
-- returns the permit to the pool if the acquisition took it, announcing the
-- new count as a release does. Made again, it finds the permit gone and
-- changes nothing more, but announces the count again when the first
-- attempt gave the permit back (the record says "given"): that attempt may
-- have failed at its publish, after its writes (a refused SPUBLISH, made
-- again with PUBLISH).
-- When the acquisition holds the permit and the key now holds no count (a
-- LeanMutex's owner) it fails with NOT_COUNT, and another kind's hash with
-- WRONGTYPE, before anything is written: the record is not marked.
-- Reply 1: the permit was given back; 0: the acquisition held none.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, the acquisition's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
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
-- refusal is the error a publish of this call would fail with after its
-- writes, checked before them (Redis 7's acl_check_cmd) so that a refused
-- release changes nothing: NO_PUBLISH, saying whether the ACL user may not
-- run the publish command at all or may not publish to the channel, which
-- it names (any bytes: a control byte would cut the reply); UNKNOWN_COMMAND
-- when the server has no such command (SPUBLISH renamed away), which the
-- Client makes again with PUBLISH. nil: allowed, or a server before 7.0.
local function refusal(publish, channels)
  if not redis.acl_check_cmd then
    return nil
  end
  for _, ch in ipairs(channels) do
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
  end
  return nil
end
local held = redis.call('zscore', KEYS[2], ARGV[1])
if held then
  local count = redis.call('get', KEYS[1])
  if count and not permits(count) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
end
if redis.call('get', KEYS[4]) == 'given' then
  local count = redis.call('get', KEYS[1])
  if count and permits(count) then
    local err = refusal(ARGV[2], {KEYS[3]})
    if err then
      return err
    end
    redis.call(ARGV[2], KEYS[3], javaCount(count))
  end
  return 1
end
if held then
  -- Checked before the writes: a publish refused after them failed the
  -- call with the permit given back, and the caller tried again for the
  -- record's life.
  local err = refusal(ARGV[2], {KEYS[3]})
  if err then
    return err
  end
end
if not held then
  redis.call('set', KEYS[4], 'undone', 'px', ARGV[3])
  return 0
end
-- The count first: one INCR refuses (past 2^63 - 1, or not an integer)
-- fails the call here with nothing changed, the permit still held.
local value = redis.call('incr', KEYS[1])
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('set', KEYS[4], 'given', 'px', ARGV[3])
redis.call(ARGV[2], KEYS[3], javaCount(value))
return 1
