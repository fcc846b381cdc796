-- @key k
-- @readonly
-- @return string?
return redis.call('get', KEYS[1])
