#!lua
-- SemaphoreTrySet sets a semaphore's permit count, only if none is set yet,
-- and announces the new permits on the semaphore channel. Shared by Semaphore
-- and PermitSemaphore (Redisson's RPermitExpirableSemaphore / RSemaphore
-- layout: the permit count is a plain string counter under the name).
-- A call that sets the count leaves its nonce in the record key for
-- recordTTL, so the same call made again after its reply was lost, or
-- reaching the server after such a retry, answers 1 and changes nothing, even
-- when the count was deleted in between: the record is read first, and
-- Delete does not remove it; it publishes the permits again, since the
-- first attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH). Reply 1: set (by this call);
-- 0: a count already existed, nothing changed.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- A count whose message the caller's ACL user may not publish (Redis 7 gives
-- a new user no channel) fails with NO_PUBLISH, naming the channel (or saying the command itself is refused), before anything is written (Redis
-- 7's acl_check_cmd): the PUBLISH refused after the SET failed the call with
-- the count set, and the same call made again then answered false.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:set:<nonce>, this call's record: its nonce once it set the count
-- @arg    permits   int64
-- @arg    nonce     string    this call's <client-id>:<n>
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return bool
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
-- printable is a channel as an error reply may show it: the lock's name in
-- it is any bytes, and a control byte (a line break) would cut the reply.
local function printable(s)
  return (string.gsub(s, '%c', '?'))
end
if redis.call('get', KEYS[3]) == ARGV[2] then
  redis.call(ARGV[3], KEYS[2], javaCount(ARGV[1]))
  return 1
end
local value = redis.call('get', KEYS[1])
if value then
  if not permits(value) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
  return 0
end
if redis.acl_check_cmd then
  -- acl_check_cmd raises on a command the server lacks (SPUBLISH renamed
  -- away on Redis 7): that is the refusal the Client makes the call again
  -- with PUBLISH for, and it must come before anything is written.
  local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], KEYS[2], ARGV[1])
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[3] .. ' for the permits message; nothing changed')
  end
  if not allowed then
    -- The command itself may be what is refused, whatever the channel:
    -- naming the channel would send the operator to grant it for nothing.
    if not redis.acl_check_cmd(ARGV[3]) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[3] .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[3] .. ' the permits message to channel ' .. printable(KEYS[2]) .. '; nothing changed')
  end
end
redis.call('set', KEYS[1], ARGV[1])
redis.call('set', KEYS[3], ARGV[2], 'px', ARGV[4])
redis.call(ARGV[3], KEYS[2], javaCount(ARGV[1]))
return 1
