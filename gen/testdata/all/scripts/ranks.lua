-- Ranks returns the rank of each member in k (-1 for a missing member), or
-- nil when k does not exist.
-- @key k
-- @arg members... string
-- @return []int64?
if redis.call("EXISTS", KEYS[1]) == 0 then return nil end
local out = {}
for i = 1, #ARGV do out[i] = redis.call("ZRANK", KEYS[1], ARGV[i]) or -1 end
return out
