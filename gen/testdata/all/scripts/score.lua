-- @key k
-- @arg member string
-- @return float64?
return redis.call("ZSCORE", KEYS[1], ARGV[1])
