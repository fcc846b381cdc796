#!lua flags=allow-oom
-- PermitExtend gives a held permit a new lease counted from now (server
-- clock). A permit whose lease already ended cannot be extended: it is
-- returned to the pool instead. A new lease ending before every other one
-- (and before the permit's old one), or while another's ended unreclaimed,
-- publishes 1, which Redisson's updateLeaseTime does not: waiters of every
-- client, Redisson's too, call again and hear of it. An attempt that
-- extends the permit records the lease end it set under the call's record
-- key for recordTTL: made again after its reply was lost, or reaching the
-- server after such a repeat (held up on its way), it answers that and
-- changes nothing. Extending again from a moment later would do no harm,
-- but an attempt held up past the holder's next Extend set its own lease
-- over that one's, a shorter one too, and the permit returned to the pool
-- while its holder counted on the longer lease. A repeat renews the record:
-- a write, after the first attempt's in the replication stream, so the
-- failover guard's WAIT sent with it covers that attempt. Not retryable: the
-- Client makes it again itself, within the lease asked for, whatever
-- rueidis's retries.
-- A counter without expiry makes the held permits' set lose its own, as
-- an acquisition does.
-- Reply {1, expires}: extended to expires (server unix ms); {0, 0}: no such
-- live permit, nothing extended.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, this call's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    lease     duration
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    rewake    bool      a repeat after a refused SPUBLISH: announce the free permits, as the first attempt may have reclaimed this permit and failed at its publish
-- @arg    recordTTL duration
-- @return {status int64, expires int64}
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @commands publish spublish
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
-- call changes nothing: NO_PUBLISH, saying whether the ACL user may not
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
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(publish) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  return nil
end
local count = redis.call('get', KEYS[1])
if count and not permits(count) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local seen = redis.call('get', KEYS[4])
if seen then
  redis.call('pexpire', KEYS[4], ARGV[5])
  return {1, tonumber(seen)}
end
local expires = redis.call('zscore', KEYS[2], ARGV[1])
if not expires then
  -- The attempt repeated here may have reclaimed the permit, its lease
  -- over (its publish failed after): the waiters have not heard.
  local value = tonumber(count or '0')
  if ARGV[4] == '1' and value > 0 then
    redis.call(ARGV[3], KEYS[3], javaCount(value))
  end
  return {0, 0}
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- A lease end below 0 (a Redisson lease near Long.MAX_VALUE ms, wrapped) is
-- over for nobody, as PermitAcquire reads it: the permit is held, and
-- extended as Redisson's updateLeaseTime extends it.
if tonumber(expires) >= 0 and tonumber(expires) <= now then
  if tonumber(count or '0') + 1 > 0 then
    -- Checked before the writes: a publish the ACL refused after them
    -- failed the call with the permit reclaimed and nobody told.
    local err = refusal(ARGV[3], {KEYS[3]})
    if err then
      return err
    end
  end
  -- The count first: one INCR refuses (past 2^63 - 1, or not an integer)
  -- fails the call here with nothing changed, the permit still there.
  local value = redis.call('incr', KEYS[1])
  redis.call('zrem', KEYS[2], ARGV[1])
  if value > 0 then
    redis.call(ARGV[3], KEYS[3], javaCount(value))
  end
  return {0, 0}
end
local until_ = now + tonumber(ARGV[2])
-- A refused acquirer was told when the soonest lease ends: one that now
-- ends sooner is announced, as a permit to come (1), so that a waiter on
-- each client calls again and hears of it rather than sleep past it. So is
-- a soonest lease that already ended: nobody called since to reclaim it,
-- so the waiters, told of a later end, do not know its permit is free, and
-- it is no held permit to compare with.
-- Before the write: a refused SPUBLISH, made again with PUBLISH, finds the
-- lease as it was.
-- From 0 on, as PermitAcquire reads it: a lease end below 0 is over for
-- nobody, and would publish at every Extend.
-- None: every held permit's lease end, this one's too, wrapped below 0, and
-- the new lease ends before them all.
local first = tonumber(redis.call('zrangebyscore', KEYS[2], '0', '+inf', 'withscores', 'limit', '0', '1')[2])
if not first or until_ < first or first <= now then
  local err = refusal(ARGV[3], {KEYS[3]})
  if err then
    return err
  end
  redis.call(ARGV[3], KEYS[3], '1')
end
redis.call('zadd', KEYS[2], 'xx', until_, ARGV[1])
redis.call('set', KEYS[4], until_, 'px', ARGV[5])
if redis.call('pttl', KEYS[1]) == -1 then
  -- The counter lives on without expiry (Redisson's addPermits, a SET,
  -- dropped its TTL and left the one an acquisition copied to the set):
  -- the permit extended must not vanish with the set.
  redis.call('persist', KEYS[2])
end
return {1, until_}
