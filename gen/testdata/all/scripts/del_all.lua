-- DelAll counts the call in log, then deletes the keys given: it needs one at
-- least, as DEL does.
-- @key log
-- @key keys...
-- @return int64
redis.call('INCR', KEYS[1])
return redis.call('DEL', unpack(KEYS, 2))
