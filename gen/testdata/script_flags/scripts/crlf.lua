#!lua flags=allow-oom
-- @key k
-- @return int64
return redis.call('INCR', KEYS[1])
