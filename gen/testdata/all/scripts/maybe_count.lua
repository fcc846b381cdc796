-- @key k
-- @return int64?
local v = redis.call("GET", KEYS[1])
if not v then return nil end
return tonumber(v)
