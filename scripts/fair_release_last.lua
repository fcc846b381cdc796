#!lua flags=allow-oom
-- FairReleaseLast is FairRelease for the usual case: the first attempt to give
-- up an owner's last hold, vouched for (the hold was live when the release
-- began). It takes the owner's field out of the lock hash, which has no other
-- field, so Redis deletes the key; holds left by acquisitions whose replies
-- were lost go too (the owner's last Unlock gives up every hold it has). It
-- needs no latch: a retry runs FairRelease, which reads a vouched owner's
-- missing field as released. Then it wakes the first live waiter as
-- FairRelease does.
-- It also tells the first two threads of Redisson's RFairLock queue on the
-- name, if any, as FairRelease does.
-- Reply 0: not held by this owner, nothing changed; 2: released.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @key    javaQueue      redisson_lock_queue:{name}
-- @key    javaChannel    redisson_lock__channel:{name}; a queued thread's channel is <javaChannel>:<thread>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- Nobody is queued on an uncontended release. One that tells a waiter
-- checks the first live one's wake channel (refusal) before the HDEL: a
-- publish refused after it failed the call with the lock gone and the head
-- not told. The heads whose deadline passed are only read there, and
-- dropped after the HDEL, as before the check: a refused release, or one
-- by an owner that does not hold the lock, changes nothing.
local head = redis.call('lindex', KEYS[2], '0')
local live, dead = nil, 0
if head then
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  -- The first live waiter, the one the release tells (the head, usually;
  -- past it, read in pages); dead: the heads before it, whose deadline
  -- passed.
  local deadline = redis.call('zscore', KEYS[3], head)
  if deadline and tonumber(deadline) > now then
    live = head
  end
  local from = 0
  while not live do
    local page = redis.call('lrange', KEYS[2], tostring(from), tostring(from + 99))
    for _, entry in ipairs(page) do
      local deadline = redis.call('zscore', KEYS[3], entry)
      if deadline and tonumber(deadline) > now then
        live = entry
        break
      end
      dead = dead + 1
    end
    if #page < 100 then
      break
    end
    from = from + 100
  end
end
-- Redisson's first two queued threads (read only; see FairRelease).
local java
if redis.call('lindex', KEYS[5], '0') then
  java = redis.call('lrange', KEYS[5], '0', '1')
end
if live or java then
  -- Made here, on the contended path only: Lua makes a local function's
  -- closure on every call, which costs an uncontended release 0.1 to 0.2 us.
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
  local channels = {}
  if live then
    channels[1] = KEYS[4] .. ':' .. string.match(live, '^[^:]*')
  end
  for _, thread in ipairs(java or {}) do
    channels[#channels + 1] = KEYS[6] .. ':' .. thread
  end
  local err = refusal(ARGV[2], channels)
  if err then
    if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
      -- An owner that does not hold the lock tells nobody: not held,
      -- as FairRelease (the retry) answers.
      return 0
    end
    return err
  end
end
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
  return 0
end
while dead > 0 do
  local gone = redis.call('lpop', KEYS[2], math.min(dead, 100))
  redis.call('zrem', KEYS[3], unpack(gone))
  dead = dead - #gone
end
if live then
  redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(live, '^[^:]*'), '0:' .. live)
end
if java then
  for _, thread in ipairs(java) do
    redis.call(ARGV[2], KEYS[6] .. ':' .. thread, '0')
  end
end
return 2
