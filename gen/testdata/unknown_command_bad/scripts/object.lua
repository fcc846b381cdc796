-- @key k
-- @return string?
return redis.call('OBJECT', 'ENCODNG', KEYS[1])
