#!lua
-- SemaphoreTrySet sets a semaphore's permit count, only if none is set yet,
-- and announces the new permits on the semaphore channel. Shared by Semaphore
-- and PermitSemaphore (Redisson's RSemaphore / RPermitExpirableSemaphore
-- layout: the permit count is a plain string counter under the name).
-- Reply 1: set; 0: a count already existed, nothing changed.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @arg    permits   int64
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return bool
-- @commands publish spublish
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
