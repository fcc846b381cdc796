-- MutexRelease gives up one hold of a reentrant lock. The last hold deletes the
-- lock and publishes Redisson's unlock message "0" on its channel. The outcome
-- is remembered for a short while under a per-call latch key, so a retried
-- release whose first reply was lost answers the first outcome again.
-- Reply {0, 0}: not held by this owner, nothing changed; {1, holds}: still held;
-- {2, receivers}: released, receivers = subscribers that got the message.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    latch     redisson_unlock_latch:{name}:<request-id>
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    latchTTL  duration
-- @return {status int64, value int64}
local seen = redis.call('get', KEYS[3])
if seen then
  return {tonumber(seen), 0}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return {0, 0}
end
local holds = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if holds > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[3], 1, 'px', ARGV[4])
  return {1, holds}
end
redis.call('del', KEYS[1])
local receivers = redis.call(ARGV[3], KEYS[2], '0')
redis.call('set', KEYS[3], 2, 'px', ARGV[4])
return {2, receivers}
