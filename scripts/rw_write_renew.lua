#!lua flags=allow-oom
-- RwWriteRenew renews a write hold (the watchdog and Extend): the lock's
-- expiry becomes the lease, or the longest lease left of the writer's own
-- read holds when that is longer (in write mode only the writer can hold
-- reads), so renewing or shortening the write never ends those reads early.
-- A call names the hold's fencing token, and a write field granted since (the
-- counter has moved past that token) is another hold's, whose lease it leaves
-- alone (see MutexRenew).
-- An Extend (announce) that brings the lock's expiry forward publishes "1",
-- as a read release that does so: waiters of every client, Go's and
-- Redisson's, were told the longer TTL and would sleep on it. The watchdog's
-- renewals publish nothing; a repeat finds the expiry it set, and publishes
-- only as the repeat of an attempt that failed at its publish, after its
-- writes (a refused SPUBLISH, made again with PUBLISH: again).
-- Not retryable: rueidis would send a renewal whose connection broke again
-- on the next one, also after its hold ended (an Unlock that failed leaves
-- the lock only until its lease ends); the watchdog makes a failed renewal
-- again itself, and Extend a call whose connection broke, while the hold
-- lasts.
-- @key    lock
-- @key    timeouts       {name}:<owner>:rwlock_timeout, the owner's read lease keys
-- @key    fence          redisson_lock_token:{name}
-- @key    channel        redisson_rwlock:{name}
-- @arg    lease          duration
-- @arg    writeOwner     string     the write field, <owner>:write
-- @arg    readOwner      string     the same owner's read field
-- @arg    token          int64      the fencing token of the hold, 0 for none
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    announce       bool       publish "1" when the expiry moves earlier (Extend)
-- @arg    again          bool       a repeat of an attempt that failed at its publish: publish "1"
-- @return bool
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return 0
end
if ARGV[4] ~= '0' then
  local drawn = redis.call('get', KEYS[3])
  if drawn and drawn ~= ARGV[4] then
    return 0
  end
end
local ttl = tonumber(ARGV[1])
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if reads then
  for i = 1, reads do
    local left = redis.call('pttl', KEYS[2] .. ':' .. i)
    if left > ttl then
      ttl = left
    end
  end
end
local before = redis.call('pttl', KEYS[1])
local announce = ARGV[6] == '1' and (before < 0 or ttl < before) or ARGV[7] == '1'
if announce and redis.acl_check_cmd then
  -- Its message is checked before the write: a publish the ACL refused
  -- after it failed the call with the shorter lease set and nobody told.
  -- Written out, not a local function (a closure made on every call): the
  -- watchdog's renewals, which publish nothing, run this script often and
  -- check nothing. acl_check_cmd raises on a command the server lacks
  -- (SPUBLISH renamed away): the Client makes the call again with PUBLISH.
  -- A channel is any bytes: a control byte would cut the reply.
  local known, allowed = pcall(redis.acl_check_cmd, ARGV[5], KEYS[4], '1')
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[5] .. ' for the message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(ARGV[5]) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[5] .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[5] .. ' the message to channel ' .. (string.gsub(KEYS[4], '%c', '?')) .. ' (the channel is refused); nothing changed')
  end
end
redis.call('pexpire', KEYS[1], ttl)
if announce then
  redis.call(ARGV[5], KEYS[4], '1')
end
return 1
