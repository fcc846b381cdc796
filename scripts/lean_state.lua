-- LeanState reads a lean lock without changing it: whether anyone holds it,
-- whether this owner does, and the remaining lease in ms (-2: no lock, -1: no
-- expiry). A key of another lock kind (a Mutex's hash) fails with WRONGTYPE,
-- a string holding no owner (a Semaphore's or CountDownLatch's count,
-- another program's value) with NOT_LEAN.
-- @key    lock
-- @arg    owner     string
-- @return {owners int64, holds int64, ttl int64}
-- @readonly
-- @error  NOT_LEAN  the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote
local v = redis.call('get', KEYS[1])
if not v then
  return {0, 0, -2}
end
if not string.find(v, ':', 1, true) then
  return redis.error_reply('NOT_LEAN the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote')
end
local holds = 0
if v == ARGV[1] then
  holds = 1
end
return {1, holds, redis.call('pttl', KEYS[1])}
