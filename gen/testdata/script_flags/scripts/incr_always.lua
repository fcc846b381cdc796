#!lua flags=allow-oom
-- IncrAlways adds to a counter, even when Redis is out of memory.
-- @key counter
-- @arg by int64
-- @return int64
return redis.call('INCRBY', KEYS[1], ARGV[1])
