#!lua flags=allow-oom
-- FairRedissonCancel takes a waiter that gives up out of a Redisson-protocol
-- fair queue, as RFairLock's acquireFailed does: every waiter behind it has
-- its score lowered by waitTime (the one the leaving waiter queued with),
-- then it leaves the list and the score set. O(queue length). If the lock is
-- free, the heads that were stale before the call (score <= now, the
-- caller's clock) are evicted and
-- the new head is sent Redisson's unlock message "0" on its channel, as
-- Redisson's unlock does for a free lock, so it does not sleep out its
-- timer; a stale head told instead would be a waiter that died. A repeat
-- (the attempt before it may have failed at its publish, after its writes:
-- a refused SPUBLISH, made again with PUBLISH) finds the waiter gone and
-- tells the head of a free lock all the same, judging every head by its
-- score before the first attempt's lowering. Reply true when the waiter
-- was queued.
-- @key    lock
-- @key    queue          redisson_lock_queue:{name}
-- @key    timeouts       redisson_lock_timeout:{name}
-- @key    channel        redisson_lock__channel:{name}; a waiter's channel is <channel>:<field>
-- @arg    owner          string
-- @arg    waitTime       duration
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    repeat         bool       an earlier attempt of this leave may have run
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
local queue = redis.call('lrange', KEYS[2], '0', '-1')
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
local found = i <= #queue
local free = redis.call('exists', KEYS[1]) == 0
if free and (found or ARGV[5] == '1') then
  -- The waiter told is found before the writes, and its channel checked
  -- (refusal): a publish the ACL refused after them failed the call with
  -- the waiter gone, the scores behind it lowered and the head not told.
  -- It is the first waiter left that the eviction below keeps, judged by
  -- the scores as they are now (each as the eviction judges it).
  local told = nil
  for j = 1, #queue do
    if queue[j] ~= ARGV[1] then
      local score = redis.call('zscore', KEYS[3], queue[j])
      if score == false and found and j > i then
        -- Behind the waiter, the lowering gives it a score (less
        -- waitTime), which the eviction judges as 0: stale.
        score = '0'
      elseif score == false then
        told = queue[j]
        break
      elseif not found then
        score = tonumber(score) + tonumber(ARGV[2])
      end
      score = tonumber(score)
      if score > tonumber(ARGV[4]) then
        told = queue[j]
        break
      end
    end
  end
  if told then
    local err = refusal(ARGV[3], {KEYS[4] .. ':' .. told})
    if err then
      return err
    end
  end
end
local lowered = {}
i = i + 1
while i <= #queue do
  redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
  lowered[queue[i]] = true
  i = i + 1
end
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('lrem', KEYS[2], '0', ARGV[1])
if not found and ARGV[5] ~= '1' then
  return 0
end
if free then
  local head = redis.call('lindex', KEYS[2], '0')
  while head do
    local score = redis.call('zscore', KEYS[3], head)
    if score == false then
      break
    end
    -- Judged by its score before this call lowered it: a waiter that only
    -- the lowering made stale is told, and its own call serves it. A
    -- repeat (the waiter gone) lowers nothing, but its first attempt may
    -- have lowered every waiter left: each is judged as lowered.
    score = tonumber(score)
    if lowered[head] or not found then
      score = score + tonumber(ARGV[2])
    end
    if score > tonumber(ARGV[4]) then
      break
    end
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
    head = redis.call('lindex', KEYS[2], '0')
  end
  if head then
    redis.call(ARGV[3], KEYS[4] .. ':' .. head, '0')
  end
end
if not found then
  return 0
end
return 1
