-- @key channel
-- @arg publish string
-- @commands publish spublish
-- @return int64
return redis.call(ARGV[1], KEYS[1])
