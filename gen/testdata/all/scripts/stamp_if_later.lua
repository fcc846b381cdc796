-- StampIfLater stores at in k unless k holds a time as late or later.
-- @key    k
-- @arg    at  time
-- @return bool   whether at was stored
local cur = redis.call("GET", KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1])
return 1
