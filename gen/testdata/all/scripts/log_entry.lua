-- LogEntry counts a call in k and keeps v beside it, in k .. ':last'.
-- @key    k
-- @arg    v  string
-- @return int64  the calls counted
local n = redis.call("INCR", KEYS[1])
redis.call("SET", KEYS[1] .. ":last", ARGV[1])
return n
