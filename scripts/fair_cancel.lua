#!lua flags=allow-oom
-- FairCancel takes a waiter that gives up (its wait or context ended) out of a
-- fair lock's queue. If it was first in line and the lock is free, the next
-- waiter is told (as FairRelease tells it) so the lock does not sit idle. LREM walks the
-- queue up to the waiter: O(position), on the rare path only.
-- Reply true when the waiter was queued.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('zrem', KEYS[3], ARGV[1]) == 0 then
  return 0
end
local wasHead = redis.call('lindex', KEYS[2], '0') == ARGV[1]
redis.call('lrem', KEYS[2], '1', ARGV[1])
if wasHead and redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
end
return 1
