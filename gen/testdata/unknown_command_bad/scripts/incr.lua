-- @key counter
-- @arg by int64
-- @return int64
return redis.call('incrbyy', KEYS[1], ARGV[1])
