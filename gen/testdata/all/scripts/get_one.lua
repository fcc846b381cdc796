-- GetOne counts the call in log, then reads the key given: GET takes one
-- key, so it needs exactly one.
-- @key log
-- @key keys...
-- @return string?
redis.call('INCR', KEYS[1])
return redis.call('GET', unpack(KEYS, 2))
