-- @key k
-- @return int64
x = 1
function helper() return 2 end
return redis.call('incrby', KEYS[1], x + helper())
