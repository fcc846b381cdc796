#!lua flags=allow-oom
-- LatchCountDown decrements a latch. Reaching zero deletes the latch and
-- publishes Redisson's "zero" message 0, which releases every waiter. A latch
-- that is not counting stays as it is.
-- Reply: the count left (0 once released or when not counting).
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
local v = redis.call('decr', KEYS[1])
if v <= 0 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[1], KEYS[2], '0')
  return 0
end
return v
