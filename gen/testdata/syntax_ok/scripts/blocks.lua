-- Long strings, comments and nested blocks parse.
-- @key k
-- @return int64
--[[ a long
comment ]]
local s = [[a "long" string]]
local n = 0
repeat
  n = n + 1
until n >= #s or n > 3
while n > 0 do
  n = n - 1
end
return redis.call('strlen', KEYS[1]) + n
