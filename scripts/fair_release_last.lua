#!lua flags=allow-oom
-- FairReleaseLast is FairRelease for the usual case: the first attempt to give
-- up an owner's last hold, vouched for (the hold was live when the release
-- began). It takes the owner's field out of the lock hash, which has no other
-- field, so Redis deletes the key; holds left by acquisitions whose replies
-- were lost go too (the owner's last Unlock gives up every hold it has). It
-- needs no latch: a retry runs FairRelease, which reads a vouched owner's
-- missing field as released. Then it wakes the first live waiter as
-- FairRelease does.
-- Reply 0: not held by this owner, nothing changed; 2: released.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
  return 0
end
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
  if head then
    redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
end
return 2
