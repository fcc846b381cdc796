-- PermitAvailable returns the permits of an expirable semaphore free right
-- now, after returning to the pool the permits whose lease ended (server
-- clock; up to 1000 a call) and announcing them if any. Ended leases beyond
-- those 1000 are counted as free too, as PermitState counts them: the next
-- calls return them. Made again after its reply was lost, it finds them
-- returned already and answers the count. Permits free past 2^53 - 1
-- (another client's count) read as 2^53 - 1: the reply goes through a Lua
-- number, and one that rounds to 2^63 came back as -2^63.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    rewake    bool      a repeat after a refused SPUBLISH: announce the free permits, as the first attempt may have reclaimed expired ones and failed at its publish
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
local count = redis.call('get', KEYS[1])
if count and not permits(count) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
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
    local known, allowed = pcall(redis.acl_check_cmd, ARGV[1], KEYS[3], '0')
    if not known then
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[1] .. ' for the count message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(ARGV[1]) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[1] .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[1] .. ' the count message to channel ' .. (string.gsub(KEYS[3], '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  -- The count first: one INCRBY refuses (past 2^63 - 1, or not an
  -- integer) fails the call here with nothing changed, the permits still
  -- there to be reclaimed.
  local value = redis.call('incrby', KEYS[1], #expired)
  redis.call('zrem', KEYS[2], unpack(expired))
  if value > 0 then
    redis.call(ARGV[1], KEYS[3], javaCount(value))
  end
  -- Leases that ended beyond this call's 1000 are free as well.
  return math.min(value + redis.call('zcount', KEYS[2], '0', now), 9007199254740991)
end
local value = tonumber(count or '0')
if ARGV[2] == '1' and value > 0 then
  -- The attempt repeated here reclaimed them (its publish failed after):
  -- nothing is left to reclaim, and the waiters have not heard.
  redis.call(ARGV[1], KEYS[3], javaCount(value))
end
return math.min(value, 9007199254740991)
