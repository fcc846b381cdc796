-- @key k
-- @return none
redis.call('set', KEYS[1])
return redis.call('get', KEYS[1], 'extra')
