-- @key queue
-- @return []string?
return redis.call('blpop', KEYS[1], 0)
