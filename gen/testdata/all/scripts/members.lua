-- @key k
-- @return []string
return redis.call("SMEMBERS", KEYS[1])
