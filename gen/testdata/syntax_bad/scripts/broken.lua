-- @key a
-- @key b
-- @arg c string
-- @arg d string
-- @return int64
local n = = redis.call('incr', KEYS[1])
return redis.call('incrby', KEYS[2], ARGV[1] .. ARGV[2])
