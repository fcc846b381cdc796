#!lua flags=allow-oom
-- LatchDelete removes a latch whatever its count and publishes the "zero"
-- message 0 so every waiter is released. The record of the TrySetCount that
-- set the count stays until it expires, so that call, made again after its
-- reply was lost, still answers as it did and sets nothing.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the count may be one another caller set after the first attempt), but a
-- repeat of a call that deleted the latch publishes 0 again while the latch
-- is still gone: the first attempt may have failed at its publish, after its
-- writes (a refused SPUBLISH, made again with PUBLISH), and the waiters
-- would not hear of it. Once a new count is set it publishes nothing.
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- Reply 1: there was a latch; 0: none.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE: nothing is deleted, since that would
-- end another owner's lock (Redisson's delete deletes it).
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @arg    slack     duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return bool
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @retryable
-- @commands publish spublish
-- @error  LATE      the call reached the server after its reservation ended; nothing changed
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
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the zero message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(publish) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the zero message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
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
local seen = redis.call('get', KEYS[3])
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[3]) < tonumber(ARGV[3]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  -- Only while the latch is still gone: once a new count is set, "0"
  -- would open a Redisson waiter's latch that its "1" closed, and that
  -- waiter would read the count in a loop until it reached zero.
  if seen == '1' and redis.call('exists', KEYS[1]) == 0 then
    redis.call(ARGV[1], KEYS[2], '0')
  end
  return tonumber(seen)
end
local value = redis.call('get', KEYS[1])
if value and not count(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
-- Checked before the writes (only when there is a latch to delete, the
-- one case that publishes): a publish refused after them failed the call
-- with the latch deleted.
if value then
  local err = refusal(ARGV[1], KEYS[2])
  if err then
    return err
  end
end
local n = redis.call('del', KEYS[1])
redis.call('set', KEYS[3], n, 'px', ARGV[2])
if n == 1 then
  redis.call(ARGV[1], KEYS[2], '0')
end
return n
