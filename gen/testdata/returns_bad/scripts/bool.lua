-- SET NX answers "OK" or nil: a bool reads 1/0 or nil, not "OK".
-- @key k
-- @return bool
return redis.call('set', KEYS[1], 1, 'NX')
