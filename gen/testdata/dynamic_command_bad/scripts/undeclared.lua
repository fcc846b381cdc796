-- @key channel
-- @arg publish string
-- @return int64
return redis.call(ARGV[1], KEYS[1], 'hello')
