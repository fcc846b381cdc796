-- @key k
-- @arg members... string
-- @return []int64?
local out = {}
for i = 1, #ARGV do out[i] = redis.call("ZRANK", KEYS[1], ARGV[i]) or -1 end
return out
