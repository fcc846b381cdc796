-- RateLimit lets a caller through at most `limit` times per window.
-- @name     RateLimit                 (optional; default: CamelCase of the file name)
-- @key      counter                   KEYS[1]; keys are strings, in order
-- @key      others...                 variadic: the rest of KEYS (last key only)
-- @arg      limit   int64             ARGV[1]; in order
-- @arg      window  duration          sent as integer milliseconds
-- @return   bool                      the reply type (see below)
-- @error    OVER_LIMIT  caller is over its limit
-- @retryable                          safe to retry on a lost reply (rueidis.NewLuaScriptRetryable)
local n = redis.call("INCR", KEYS[1])
if n == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
for i = 2, #KEYS do
  redis.call("INCR", KEYS[i])
end
if n > tonumber(ARGV[1]) then
  return redis.error_reply("OVER_LIMIT " .. n .. " > " .. ARGV[1])
end
return 1
