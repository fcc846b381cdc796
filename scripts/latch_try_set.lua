#!lua
-- LatchTrySet sets a count-down latch's count, only if the latch is not
-- already counting, and publishes Redisson's "new count" message 1 on the
-- latch channel. A call that sets the count leaves its nonce in the record
-- key for recordTTL, so the same call made again after its reply was lost,
-- or reaching the server after such a retry, answers 1 and changes nothing,
-- even when the count was counted down to zero or deleted in between: the
-- record is read first, and neither CountDown nor Delete removes it. That
-- repeat publishes "1" again while the latch still counts: the first
-- attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH), and a Redisson waiter that missed it
-- keeps its latch open and polls the count in a loop instead of waiting.
-- Once the count reached zero or was deleted it publishes nothing: "1"
-- would close the latch the zero opened, and a Redisson waiter that read
-- the count before the zero would block on it.
-- Reply 1: set (by this call);
-- 0: already counting, nothing changed.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:set:<nonce>, this call's record: its nonce once it set the count
-- @arg    count     int64
-- @arg    nonce     string    this call's <client-id>:<n>
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return bool
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @retryable
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
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
if redis.call('get', KEYS[3]) == ARGV[2] then
  -- Only while the latch still counts: after a zero (or a Delete) "1"
  -- would close a Redisson waiter's latch that the zero opened.
  local value = redis.call('get', KEYS[1])
  local left = value and count(value)
  if left and left > 0 then
    redis.call(ARGV[3], KEYS[2], '1')
  end
  return 1
end
local value = redis.call('get', KEYS[1])
if value then
  if not count(value) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
  return 0
end
-- Checked before the writes: a publish refused after them failed the call
-- with the count set.
local err = refusal(ARGV[3], KEYS[2])
if err then
  return err
end
redis.call('set', KEYS[1], ARGV[1])
redis.call('set', KEYS[3], ARGV[2], 'px', ARGV[4])
redis.call(ARGV[3], KEYS[2], '1')
return 1
