-- @key k
-- @arg fields... string
-- @return string?
return redis.call('get', KEYS[1], unpack(ARGV))
