-- SemaphoreRelease adds n permits (n < 0 removes them; the count may go
-- negative, as Redisson's addPermits allows) and publishes the new count on
-- the semaphore channel so waiters retry. Reply: the new count.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @arg    n         int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
local value = redis.call('incrby', KEYS[1], ARGV[1])
if value > 0 then
  redis.call(ARGV[2], KEYS[2], value)
end
return value
