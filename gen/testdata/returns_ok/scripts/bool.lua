-- @key k
-- @return bool
return redis.call('setnx', KEYS[1], 1)
