-- @key k
-- @arg cmd string
-- @commands publish
-- @readonly
-- @return int64
return redis.call(ARGV[1], KEYS[1], 'hello')
