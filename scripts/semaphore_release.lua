#!lua flags=allow-oom
-- SemaphoreRelease adds n permits (n < 0 removes them; the count may go
-- negative, as Redisson's addPermits allows) and publishes the new count on
-- the semaphore channel so waiters retry. Like RSemaphore's release and
-- addPermits it publishes every time, whatever the count. Reply: the new count.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @arg    n         int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
local value = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], value)
return value
