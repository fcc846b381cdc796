-- @arg name string
-- @return string?
return redis.call('get', ARGV[1])
