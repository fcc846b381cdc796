-- @key k
-- @return string
return redis.call('get', KEYS[1])
