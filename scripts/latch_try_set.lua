#!lua
-- LatchTrySet sets a count-down latch's count, only if the latch is not
-- already counting, and publishes Redisson's "new count" message 1 on the
-- latch channel. Reply 1: set; 0: already counting, nothing changed.
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @arg    count     int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return bool
-- @commands publish spublish
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], '1')
return 1
