-- SetIfGreater stores n in k unless k holds a number as great or greater:
-- a fencing token that only grows.
-- @key    k
-- @arg    n  int64
-- @return bool   whether n was stored
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
