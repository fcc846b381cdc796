-- @key k
-- @return int64
return redis.call('get', KEYS[1])
