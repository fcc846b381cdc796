-- FairForceUnlock deletes a fair lock whoever holds it and tells the first
-- waiter in the queue. Reply true when there was a lock to delete.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    channel        redisson_lock__channel:{name}
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
local head = redis.call('lindex', KEYS[2], 0)
if head then
  redis.call(ARGV[1], KEYS[3] .. ':' .. head, '0')
end
return 1
