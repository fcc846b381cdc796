#!lua flags=allow-oom
-- FairRedissonForceUnlock deletes a fair lock queued by Redisson's RFairLock
-- protocol whoever holds it: stale heads (score <= now, the caller's clock)
-- are evicted first, then the first waiter is sent "0" on its own channel.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    queue          redisson_lock_queue:{name}
-- @key    timeouts       redisson_lock_timeout:{name}
-- @key    channel        redisson_lock__channel:{name}; a waiter's channel is <channel>:<field>
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @commands publish spublish
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local score = redis.call('zscore', KEYS[3], first)
  if score == false or tonumber(score) > tonumber(ARGV[1]) then
    break
  end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
local head = redis.call('lindex', KEYS[2], 0)
if head then
  redis.call(ARGV[2], KEYS[4] .. ':' .. head, '0')
end
return 1
