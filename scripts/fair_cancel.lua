#!lua flags=allow-oom
-- FairCancel takes a waiter that gives up (its wait or context ended) out of a
-- fair lock's queue. If it was first in line and the lock is free, the next
-- live waiter is told, as FairRelease tells it (waiters whose deadline passed
-- are evicted first), so the lock does not sit idle; if the lock is held
-- with an expiry, the next waiter is told all the same, to learn the
-- holder's lease now that it is first in line. LREM walks the
-- queue up to the waiter: O(position), on the rare path only.
-- A repeat (the attempt before it may have failed at its publish, after its
-- writes: a refused SPUBLISH, made again with PUBLISH) finds the waiter gone
-- and tells the head all the same, as if the waiter had been first in line:
-- a name told once more costs that waiter one call.
-- Reply true when the waiter was queued.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    repeat         bool       an earlier attempt of this leave may have run
-- @return bool
-- @retryable
-- @commands publish spublish
local queued = redis.call('zrem', KEYS[3], ARGV[1]) == 1
if not queued and ARGV[3] ~= '1' then
  return 0
end
local wasHead = true
if queued then
  wasHead = redis.call('lindex', KEYS[2], '0') == ARGV[1]
  redis.call('lrem', KEYS[2], '1', ARGV[1])
end
if wasHead and redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    while head do
      local deadline = redis.call('zscore', KEYS[3], head)
      if deadline and tonumber(deadline) > now then
        break
      end
      redis.call('lpop', KEYS[2])
      redis.call('zrem', KEYS[3], head)
      head = redis.call('lindex', KEYS[2], '0')
    end
  end
  if head then
    redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
elseif wasHead and redis.call('pttl', KEYS[1]) > 0 then
  -- The lock is held: the next waiter, first in line now, sleeps a third of
  -- its timeout, where a head sleeps no longer than the holder's lease (in
  -- case the holder dies). It is told to ask again and learn the lease. A
  -- held lock evicts nobody, as in FairAcquire.
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
end
if not queued then
  return 0
end
return 1
