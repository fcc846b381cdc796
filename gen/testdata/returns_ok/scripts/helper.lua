-- A helper function's returns go to the script, not to Redis.
-- @key k
-- @return int64
local function ttl()
  return redis.call('get', KEYS[1])
end
if ttl() then
  return 1
end
return 0
