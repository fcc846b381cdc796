-- AddScore counts a call in log, then adds member to the sorted set z with
-- score.
-- @key    log
-- @key    z
-- @arg    score   float64
-- @arg    member  string
-- @return int64   the calls counted
local n = redis.call("INCR", KEYS[1])
redis.call("ZADD", KEYS[2], ARGV[1], ARGV[2])
return n
