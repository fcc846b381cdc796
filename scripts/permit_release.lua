#!lua flags=allow-oom
-- PermitRelease returns a permit to an expirable semaphore's pool and
-- publishes the new count so waiters retry (always, as Redisson's tryRelease).
-- Reply 1: released; 2: released, but its lease had already ended (nobody else
-- took it meanwhile); 0: no such permit (unknown id, released already, or
-- expired and reclaimed), nothing changed.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
local expires = redis.call('zscore', KEYS[2], ARGV[1])
if not expires then
  return 0
end
redis.call('zrem', KEYS[2], ARGV[1])
local value = redis.call('incr', KEYS[1])
redis.call(ARGV[2], KEYS[3], value)
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(expires) <= now then
  return 2
end
return 1
