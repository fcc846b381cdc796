-- @key k
-- @arg v string
-- @return string
return redis.call('set', KEYS[1], ARGV[1], 'NX')
