#!lua flags=allow-oom
-- SemaphoreUndo gives back the permits of an acquisition attempt whose reply
-- was lost, once: when its latch records permits taken, they are added back
-- (and announced, as a release is); either way the latch is left marking the
-- attempt undone for latchTTL, so the attempt cannot take permits later.
-- Reply: the permits given back (0 when the attempt took none).
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @key    latch     the attempt's record (see SemaphoreAcquire)
-- @arg    latchTTL  duration
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
-- @retryable
local taken = redis.call('get', KEYS[3])
redis.call('set', KEYS[3], 'undone', 'px', ARGV[1])
if taken == false or taken == 'undone' then
  return 0
end
local value = redis.call('incrby', KEYS[1], taken)
redis.call(ARGV[2], KEYS[2], value)
return tonumber(taken)
