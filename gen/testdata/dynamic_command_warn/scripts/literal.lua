-- @key channel
-- @commands publish spublish
-- @return int64
return redis.call('publish', KEYS[1], 'hello')
