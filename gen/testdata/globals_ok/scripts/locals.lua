-- @key k
-- @return int64
local x = 1
local function helper(n) return n + 1 end
local t = {}
t.count = helper(x)
x = x + 1
return redis.call('incrby', KEYS[1], x + t.count)
