-- LeanState reads a lean lock without changing it: whether anyone holds it,
-- whether this owner does, and the remaining lease in ms (-2: no lock, -1: no
-- expiry). A key of another lock kind (a Mutex's hash) fails with WRONGTYPE.
-- @key    lock
-- @arg    owner     string
-- @return {owners int64, holds int64, ttl int64}
-- @readonly
local v = redis.call('get', KEYS[1])
if not v then
  return {0, 0, -2}
end
local holds = 0
if v == ARGV[1] then
  holds = 1
end
return {1, holds, redis.call('pttl', KEYS[1])}
