-- @key set
-- @arg member string
-- @return bool?
return redis.call("SISMEMBER", KEYS[1], ARGV[1])
