-- @key k
-- @readonly
-- @return int64
return redis.call('del', KEYS[1])
