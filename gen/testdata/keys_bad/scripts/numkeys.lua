-- @key dest
-- @key a
-- @arg other string
-- @return int64
return redis.call('zunionstore', KEYS[1], 2, KEYS[2], ARGV[1])
