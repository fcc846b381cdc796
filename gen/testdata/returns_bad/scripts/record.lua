-- @key k
-- @return {status int64, ttl int64}
return {1, redis.call('pttl', KEYS[1]), 'extra'}
