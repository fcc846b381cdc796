#!lua flags=allow-oom
-- PermitAddPermits changes an expirable semaphore's free permits by n (n < 0
-- removes them; the count may go negative) and, when n > 0, publishes n on
-- the semaphore channel, as RPermitExpirableSemaphore's addPermits does: a
-- Redisson waiter lets up to that many of its acquirers retry, and Go waiters
-- retry on any message. Removing permits publishes nothing. Reply: the new
-- count.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @arg    n         int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
local value = redis.call('incrby', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return value
