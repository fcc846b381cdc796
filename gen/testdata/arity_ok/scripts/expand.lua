-- @key k
-- @arg fields... string
-- @return int64
return redis.call('HDEL', KEYS[1], unpack(ARGV))
