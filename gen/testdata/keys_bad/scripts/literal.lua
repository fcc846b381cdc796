-- @return int64
return redis.call('incr', 'counter:' .. 'x')
