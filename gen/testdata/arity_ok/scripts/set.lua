-- @key k
-- @arg v string
-- @arg ttl duration
-- @return none
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
