-- @key k
-- @return int64
-- @error SOLD_OUT nothing left
return redis.call('decr', KEYS[1])
