-- @key k
-- @return none
return redis.call('watch', KEYS[1])
