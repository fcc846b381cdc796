-- @key k
-- @return string?
redis.call('set', KEYS[1], 'x', 'NX')
return redis.call('get', KEYS[1])
