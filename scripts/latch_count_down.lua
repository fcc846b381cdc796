#!lua flags=allow-oom
-- LatchCountDown decrements a latch. Reaching zero deletes the latch and
-- publishes Redisson's "zero" message 0, which releases every waiter. A latch
-- that is not counting stays as it is. A call that decrements records itself
-- under its own key for recordTTL: made again after its reply was
-- lost, or reaching the server after such a retry, it counts nothing twice;
-- one that finds the latch gone after it counted announces zero again: the
-- first attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH), and the waiters would not hear of it.
-- Reply: the count left (0 once released or when not counting).
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written. A count
-- down to zero whose message the caller's ACL user may not publish (Redis 7
-- gives a new user no channel) fails with NO_PUBLISH, naming the channel (or saying the command itself is refused), before anything is written
-- too (Redis 7's acl_check_cmd): the PUBLISH refused after the DEL failed
-- the call with the latch released, its waiters not told.
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @commands publish spublish
-- @retryable
-- printable is a channel as an error reply may show it: the lock's name in
-- it is any bytes, and a control byte (a line break) would cut the reply.
local function printable(s)
  return (string.gsub(s, '%c', '?'))
end
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
if not value then
  if redis.call('exists', KEYS[3]) == 1 then
    redis.call(ARGV[1], KEYS[2], '0')
  end
  return 0
end
local n = count(value)
if not n then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
if n <= 1 and redis.acl_check_cmd and redis.call('exists', KEYS[3]) == 0 then
  -- acl_check_cmd raises on a command the server lacks (SPUBLISH renamed
  -- away on Redis 7): that is the refusal the Client makes the call again
  -- with PUBLISH for, and it must come before anything is written.
  local known, allowed = pcall(redis.acl_check_cmd, ARGV[1], KEYS[2], '0')
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[1] .. ' for the zero message; nothing changed')
  end
  if not allowed then
    -- The command itself may be what is refused, whatever the channel:
    -- naming the channel would send the operator to grant it for nothing.
    if not redis.acl_check_cmd(ARGV[1]) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[1] .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[1] .. ' the zero message to channel ' .. printable(KEYS[2]) .. '; nothing changed')
  end
end
if redis.call('exists', KEYS[3]) == 1 then
  return n
end
-- The first write, which cannot fail: count took only values DECR lowers.
local v = redis.call('decr', KEYS[1])
redis.call('set', KEYS[3], '1', 'px', ARGV[2])
if v <= 0 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[1], KEYS[2], '0')
  return 0
end
return v
