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
local queue = redis.call('lrange', KEYS[2], '0', '-1')
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
local found = i <= #queue
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
if redis.call('exists', KEYS[1]) == 0 then
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
