-- @key stream
-- @arg other string
-- @return none
redis.call('xread', 'COUNT', 1, 'STREAMS', KEYS[1], ARGV[1], '0', '0')
return nil
