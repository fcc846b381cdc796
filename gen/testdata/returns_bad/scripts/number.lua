-- @key k
-- @return string
redis.call('del', KEYS[1])
return 1
