#!lua
-- PermitAcquire takes one permit of an expirable semaphore under a new permit
-- id with a lease, in Redisson's RPermitExpirableSemaphore layout: the count
-- of free permits is a string counter under the name and the permits held
-- are a sorted set {name}:timeout of id -> expiry (unix ms). Expiry is read
-- from the server clock (TIME), never from the client, so a client with a
-- skewed clock can neither steal live permits nor keep dead ones. Permits
-- whose lease ended are returned to the pool first.
-- The held permits' set gets the counter's TTL, or loses its own when the
-- counter has none (Redisson's addPermits drops the counter's alone).
-- An acquisition of unknown outcome is undone through its record
-- (PermitUndo): an attempt that reaches the server after that takes nothing.
-- Reply {1, expires}: taken, expires = lease end (server unix ms);
-- {0, next}: none free, next = ms until the soonest lease ends (0: some have
-- ended already, beyond the 1000 a call reclaims: call again at once; -1:
-- none will).
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, the acquisition's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    lease     duration
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    rewake    bool      a repeat after a refused SPUBLISH: announce the free permits, as the first attempt may have reclaimed expired ones and failed at its publish
-- @return {status int64, value int64}
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
local never = 922337203685477
local count = redis.call('get', KEYS[1])
if count and not permits(count) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
if redis.call('exists', KEYS[4]) == 1 then
  return {0, -1}
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[2], '0', now, 'limit', '0', '1000')
if #expired > 0 then
  -- Checked before the writes, inline (only this path, which reclaims and
  -- publishes, pays for it): a publish refused after them failed the call
  -- with the permits reclaimed and nobody told. NO_PUBLISH says whether the
  -- ACL user may not run the publish command at all or may not publish to
  -- the channel (named, control bytes masked); UNKNOWN_COMMAND: no such
  -- command (SPUBLISH renamed away), which the Client makes again with
  -- PUBLISH. Skipped on a server before 7.0 (no acl_check_cmd), and when
  -- the count stays below one (no message then).
  if redis.acl_check_cmd and tonumber(count or '0') + #expired > 0 then
    local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], KEYS[3], '0')
    if not known then
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[3] .. ' for the count message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(ARGV[3]) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[3] .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[3] .. ' the count message to channel ' .. (string.gsub(KEYS[3], '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  -- The count first: one INCRBY refuses (past 2^63 - 1, or not an
  -- integer) fails the call here with nothing changed, the permits still
  -- there to be reclaimed.
  local value = redis.call('incrby', KEYS[1], #expired)
  redis.call('zrem', KEYS[2], unpack(expired))
  if value > 0 then
    redis.call(ARGV[3], KEYS[3], javaCount(value))
  end
elseif ARGV[4] == '1' then
  -- The attempt repeated here reclaimed them (its publish failed after):
  -- nothing is left to reclaim, and the waiters have not heard.
  local value = tonumber(count or '0')
  if value > 0 then
    redis.call(ARGV[3], KEYS[3], javaCount(value))
  end
end
local value = tonumber(redis.call('get', KEYS[1]) or '0')
if value >= 1 then
  local expires = now + tonumber(ARGV[2])
  redis.call('decr', KEYS[1])
  redis.call('zadd', KEYS[2], expires, ARGV[1])
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then
    redis.call('pexpire', KEYS[2], ttl)
  else
    -- A counter without expiry keeps the held permits: Redisson's
    -- addPermits (a SET) drops the counter's TTL and leaves the one an
    -- acquisition copied here, which would take them with it.
    redis.call('persist', KEYS[2])
  end
  return {1, expires}
end
-- The soonest lease from 0 on: a lease end below 0 (a Redisson lease near
-- Long.MAX_VALUE ms wraps there) is reclaimed by nobody (every client
-- reclaims 0 to now), and read as over it made the waiter call again every
-- millisecond.
local first = redis.call('zrangebyscore', KEYS[2], '0', '+inf', 'withscores', 'limit', '0', '1')
if first[2] ~= nil and tonumber(first[2]) < never then
  return {0, math.max(0, tonumber(first[2]) - now)}
end
return {0, -1}
