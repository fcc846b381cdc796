#!lua flags=allow-oom
-- MutexWaitCancel takes a Mutex waiter that gave up (its wait or context
-- ended) out of the waiter set. A waiter no longer in the set was most likely
-- woken by a release it will not use: if the lock is still free, the wake is
-- passed on to the next registered Go waiter, so nobody waits for a message
-- that was spent. The wake goes to the waiter's client alone, on
-- scriptlock_lock_wake:{name}:<client-id> (the field's part before its first
-- colon).
-- A leave made again after its reply was lost finds its own field gone, as
-- a woken waiter's is, and the lock may still be free (the waiter woken by
-- its first attempt, or by the release, has not taken it yet): each attempt
-- records its answer under its latch (a per-call key), and a repeat that
-- finds it answers so and wakes nobody: a second waiter woken by name would
-- be taken out of the waiter set for a hand-off that is not its own. That
-- holds for every answer, also a woken waiter's that found the lock held or
-- nobody to pass to: by its repeat the lock may be free again, beside a
-- waiter a release woke or one registered since. A leave that passes the
-- wake on records after the publish, which can fail.
-- Reply true when the wake was passed on.
-- @key    lock
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    latch     redisson_unlock_latch:{name}:<request-id>, this leave's answer
-- @arg    owner     string
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    latchTTL  duration
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
if redis.call('zrem', KEYS[2], ARGV[1]) == 1 then
  redis.call('set', KEYS[4], '0', 'px', ARGV[3])
  return 0
end
local seen = redis.call('get', KEYS[4])
if seen then
  return tonumber(seen)
end
if redis.call('exists', KEYS[1]) == 1 then
  redis.call('set', KEYS[4], '0', 'px', ARGV[3])
  return 0
end
-- The wake it sends first, to the first waiter, is checked before it writes
-- (refusal): a publish the ACL refused after a waiter it passed over was
-- taken out failed the call with that waiter gone and nobody told. Only that
-- channel, as MutexRelease and MutexReleaseLast check it: a waiter further
-- back whose channel is refused neither keeps the wake from the one ahead of
-- it nor keeps a dead one ahead of it registered.
local w = redis.call('zrange', KEYS[2], '0', '0', 'withscores')
if w[1] then
  local err = refusal(ARGV[2], {KEYS[3] .. ':' .. string.match(w[1], '^[^:]*')})
  if err then
    return err
  end
end
-- A wake no client hears goes on to the next waiter, as MutexRelease's.
-- The waiter is taken out after its wake is sent, not before: the publish
-- can fail (a refused SPUBLISH, the call made again with PUBLISH), and a
-- waiter taken out but not told would sleep until its poll beside a free
-- lock, its repeat finding nobody left to tell. A later waiter (after a
-- dead one) whose wake channel the ACL refuses is left registered, to its
-- fallback timer, as the releases leave it.
for i = 1, 8 do
  if i > 1 then
    w = redis.call('zrange', KEYS[2], '0', '0', 'withscores')
  end
  if not w[1] then
    break
  end
  local ch = KEYS[3] .. ':' .. string.match(w[1], '^[^:]*')
  if i > 1 and redis.acl_check_cmd then
    local known, allowed = pcall(redis.acl_check_cmd, ARGV[2], ch, '0')
    if not (known and allowed) then
      break
    end
  end
  local heard = redis.call(ARGV[2], ch, w[2] .. ':' .. w[1])
  redis.call('zrem', KEYS[2], w[1])
  if heard > 0 or
      string.lower(ARGV[2]) ~= 'spublish' and
      not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
    redis.call('set', KEYS[4], '1', 'px', ARGV[3])
    return 1
  end
end
-- Nobody to pass to, or only a waiter whose channel is refused (every
-- publish went through, so this is written).
redis.call('set', KEYS[4], '0', 'px', ARGV[3])
return 0
