-- @arg name string
-- @return string?
return redis.call('object', 'encoding', ARGV[1])
