-- Notify stores value under k and announces it on channel with the publish
-- command given (PUBLISH, or SPUBLISH for a sharded channel).
-- @key k
-- @key channel
-- @arg publish string  "publish" or "spublish"
-- @arg value   string
-- @commands publish spublish
-- @return int64  subscribers that got the message
redis.call('set', KEYS[1], ARGV[2])
return redis.call(ARGV[1], KEYS[2], ARGV[2])
