#!lua flags=allow-oom
-- RwCancel withdraws a waiting writer that gave up. When no writer is left
-- waiting, "1" is published so readers it held back enter at once: a
-- registration whose deadline (server time) has passed, a writer that died,
-- holds no reader back and is removed first. It is published only while
-- readers can enter (the lock free or held for reading): while a writer
-- holds the lock, the writer that gave up held no reader back (that
-- writer's release tells them), and "1" would wake every waiter, Go's and
-- Redisson's, for nothing.
-- A repeat (the attempt before it may have failed at its publish, after its
-- writes: a refused SPUBLISH, made again with PUBLISH) finds the writer gone
-- and publishes all the same when no writer is left waiting, under the same
-- condition: a writer may hold the lock by then (its first attempt
-- published, and a writer took the lock since).
-- A late attempt (held up on its way: its connection broke and the repeat
-- ran first, or it timed out) can run after the owner's next wait
-- registered under the same member (an owner shared through its context):
-- place, the deadline the wait last registered, removes only that
-- registration, and one with another deadline is another wait's.
-- Reply true when the writer was registered.
-- @key    lock
-- @key    writers        redisson_rwlock_writers:{name}
-- @key    channel        redisson_rwlock:{name}
-- @arg    writeOwner     string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    repeat         bool       an earlier attempt of this withdrawal may have run
-- @arg    place          int64      the deadline the wait last registered (RwWriteAcquire's place); 0: not known, the writer's registration whatever its deadline
-- @return bool
-- @retryable
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
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
local score = redis.call('zscore', KEYS[2], ARGV[1])
if score ~= false and ARGV[4] ~= '0' and tonumber(score) ~= tonumber(ARGV[4]) then
  score = false
end
local registered = score ~= false
if not registered and ARGV[3] ~= '1' then
  return 0
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- readersMayEnter: the lock is free or held for reading. Another kind of
-- lock may hold the name by then, the lock freed since the writer queued
-- (a string, whose key HGET would refuse: read with PCALL; or a hash
-- without a mode): no reader enters there.
local function readersMayEnter()
  local mode = redis.pcall('hget', KEYS[1], 'mode')
  return mode == 'read' or (mode == false and redis.call('exists', KEYS[1]) == 0)
end
-- Whether it will publish is found before it writes, and its message
-- checked (refusal): a publish the ACL refused after the writes failed the
-- call with the writer gone and the readers it held back not told. The
-- writers left are those whose deadline has not passed, but this one.
local left = redis.call('zcount', KEYS[2], '(' .. now, '+inf')
if registered and tonumber(score) > now then
  left = left - 1
end
local tell = left == 0 and readersMayEnter()
if tell then
  local err = refusal(ARGV[2], {KEYS[3]})
  if err then
    return err
  end
end
if registered then
  redis.call('zrem', KEYS[2], ARGV[1])
end
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if tell then
  redis.call(ARGV[2], KEYS[3], '1')
end
if not registered then
  return 0
end
return 1
