-- @key k
-- @return int64
return redis.call('exists', KEYS[1])
