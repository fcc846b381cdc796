-- @key k
-- @return string?
return redis.call("GET", KEYS[1])
