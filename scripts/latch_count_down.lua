#!lua flags=allow-oom
-- LatchCountDown decrements a latch. Reaching zero deletes the latch and
-- publishes Redisson's "zero" message 0, which releases every waiter. A latch
-- that is not counting stays as it is. A call that decrements records itself
-- under its own key (SET NX) for recordTTL: made again after its reply was
-- lost, or reaching the server after such a retry, it counts nothing twice.
-- Reply: the count left (0 once released or when not counting).
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return int64
-- @commands publish spublish
-- @retryable
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
if not redis.call('set', KEYS[3], 1, 'nx', 'px', ARGV[2]) then
  return tonumber(redis.call('get', KEYS[1]))
end
local v = redis.call('decr', KEYS[1])
if v <= 0 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[1], KEYS[2], '0')
  return 0
end
return v
