-- @key counter
-- @arg by int64
-- @return int64
return redis.call('INCRBY', KEYS[1], ARGV[1])
