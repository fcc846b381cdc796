#!lua flags=allow-oom
-- FairForceUnlock deletes a fair lock whoever holds it and tells the first
-- waiter in the queue. Reply true when there was a lock to delete.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
local head = redis.call('lindex', KEYS[2], 0)
if head then
  redis.call(ARGV[1], KEYS[3] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
end
return 1
