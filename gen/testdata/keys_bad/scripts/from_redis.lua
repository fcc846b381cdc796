-- @key index
-- @return int64
local name = redis.call('get', KEYS[1])
return redis.call('del', name)
