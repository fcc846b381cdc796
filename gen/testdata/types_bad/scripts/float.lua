-- @key k
-- @arg by float
-- @return int
return redis.call('incrby', KEYS[1], ARGV[1])
