-- @key k
-- @return string?
return redis.call('object', 'encoding', KEYS[1])
