#!lua flags=allow-oom
-- FairRedissonReleaseShared is FairRedissonRelease for an owner shared
-- through its context (WithOwner), which may lock again under the same
-- field while an earlier release of it is still on its way (see
-- MutexReleaseShared): the release names the fencing token of the hold it
-- gives up, and a field whose hold was granted since (the counter has moved
-- past that token) is another hold's, so the release changes nothing. A
-- counter that has expired drew no token since.
-- Reply as FairRedissonRelease: {0, 0}: not held by this hold; {1, holds}:
-- still held; {2, receivers}: released.
-- @key    lock
-- @key    queue          redisson_lock_queue:{name}
-- @key    timeouts       redisson_lock_timeout:{name}
-- @key    channel        redisson_lock__channel:{name}; a waiter's channel is <channel>:<field>
-- @key    latch          redisson_unlock_latch:{name}:<request-id>
-- @key    fence          fencing-token counter (redisson_lock_token:{name})
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    latchTTL       duration
-- @arg    token          int64      the fencing token of the hold released
-- @return {status int64, value int64}
-- @commands publish spublish
local seen = redis.call('get', KEYS[5])
if seen then
  return {tonumber(seen), 0}
end
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local score = redis.call('zscore', KEYS[3], first)
  if score == false or tonumber(score) > tonumber(ARGV[3]) then
    break
  end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[2], 0)
  if head then
    redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
  end
  return {0, 0}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return {0, 0}
end
local drawn = redis.call('get', KEYS[6])
if drawn and drawn ~= ARGV[6] then
  return {0, 0}
end
local holds = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if holds > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[5], 1, 'px', ARGV[5])
  return {1, holds}
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 2, 'px', ARGV[5])
local receivers = 0
local head = redis.call('lindex', KEYS[2], 0)
if head then
  receivers = redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
end
return {2, receivers}
