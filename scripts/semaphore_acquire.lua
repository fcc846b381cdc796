-- SemaphoreAcquire takes n permits if that many are available.
-- Reply {1, left}: taken, left = permits still available;
-- {0, available}: not enough permits, nothing changed.
-- @key    semaphore
-- @arg    n         int64
-- @return {ok int64, permits int64}
local value = tonumber(redis.call('get', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
if value >= n then
  return {1, redis.call('decrby', KEYS[1], n)}
end
return {0, value}
