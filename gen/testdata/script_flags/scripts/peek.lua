#!lua flags=no-writes,allow-stale
-- Peek reads a value, from a replica too.
-- @key k
-- @readonly
-- @return string?
return redis.call('GET', KEYS[1])
