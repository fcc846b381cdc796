#!lua flags=allow-oom
-- PermitSetPermits makes n the total of an expirable semaphore's permits,
-- free and held, as RPermitExpirableSemaphore's setPermits does. With no
-- counter it SETs it to n. Otherwise the total is the free count plus every
-- id in the held permits' set, those whose lease has ended included (they
-- are still counted as held until a call returns them to the pool, and
-- setPermits counts them too); an equal total changes nothing, and another
-- moves the free count by the difference (INCRBY: the counter's TTL, if any,
-- stays, as Redisson's). Either change publishes n on the semaphore channel
-- (Redisson's message: a Java or Go waiter lets up to n of its acquirers
-- retry); an equal total publishes nothing. The call records itself under
-- its own key for recordTTL, also when it changes nothing: made again after
-- its reply was lost, or reaching the server after such a retry, it changes
-- nothing a second time (recomputing the total then would undo a change
-- another caller made after the first attempt ran) and answers the count;
-- the record says whether the first attempt changed the total, and such a
-- repeat publishes n again: the first attempt may have failed at its
-- publish, after its writes (a refused SPUBLISH, made again with PUBLISH).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record (or less of the reservation left than slack, the time the
-- reservation took to be answered, by which it may outlast the deadline),
-- fails with LATE and sets nothing: a total set since is left as it is.
-- Reply: the free count afterwards (it may be negative when more than n
-- permits are held).
-- A difference beyond 2^53 - 1 either way fails with RANGE before anything
-- is written: Lua numbers are exact only that far.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @arg    n         int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @arg    slack     duration  how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @error  RANGE    the count would go beyond 2^53 - 1 either way
-- @commands publish spublish
-- @retryable
-- @error  LATE     the call reached the server after its reservation ended; nothing changed
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
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
-- call changes nothing: NO_PUBLISH, saying whether the ACL user may not
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
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the new count message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(publish) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the new count message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
  end
  return nil
end
local available = redis.call('get', KEYS[1])
if available and not permits(available) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local seen = redis.call('get', KEYS[4])
if not seen or (seen == '' and redis.call('pttl', KEYS[4]) < tonumber(ARGV[4])) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  if seen == '1' then
    redis.call(ARGV[2], KEYS[3], javaCount(ARGV[1]))
  end
  return tonumber(available or '0')
end
local n = tonumber(ARGV[1])
if not available then
  -- Checked before the writes: a publish refused after them failed the
  -- call with the total set.
  local err = refusal(ARGV[2], KEYS[3])
  if err then
    return err
  end
  redis.call('set', KEYS[1], ARGV[1])
  redis.call('set', KEYS[4], '1', 'px', ARGV[3])
  redis.call(ARGV[2], KEYS[3], javaCount(ARGV[1]))
  return n
end
local free = tonumber(available)
local total = free + redis.call('zcount', KEYS[2], '0', '+inf')
if total == n then
  redis.call('set', KEYS[4], '0', 'px', ARGV[3])
  return free
end
local diff = n - total
if diff > 9007199254740991 or diff < -9007199254740991 then
  return redis.error_reply('RANGE the count would go beyond 2^53 - 1 either way')
end
local err = refusal(ARGV[2], KEYS[3])
if err then
  return err
end
-- %d, not the number itself: Lua would send 15 digits or more in exponent form.
local value = redis.call('incrby', KEYS[1], string.format('%d', diff))
redis.call('set', KEYS[4], '1', 'px', ARGV[3])
redis.call(ARGV[2], KEYS[3], javaCount(ARGV[1]))
return value
