#!lua flags=allow-oom
-- LatchDelete removes a latch whatever its count, and the record of the
-- TrySetCount that set it, and publishes the "zero" message 0 so every
-- waiter is released. Reply 1: there was a latch; 0: none.
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:set
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return bool
-- @commands publish spublish
redis.call('del', KEYS[3])
if redis.call('del', KEYS[1]) == 0 then
  return 0
end
redis.call(ARGV[1], KEYS[2], '0')
return 1
