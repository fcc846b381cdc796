#!lua
-- @key k
-- @return int64
return redis.call('DEL', KEYS[1])
