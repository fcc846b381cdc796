-- @key k
-- @return bytes
return redis.call("GET", KEYS[1]) or ""
