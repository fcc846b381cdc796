-- @key set
-- @arg member string
-- @return bool?
if redis.call("EXISTS", KEYS[1]) == 0 then return nil end
return redis.call("SISMEMBER", KEYS[1], ARGV[1])
