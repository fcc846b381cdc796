#!lua flags=allow-oom
-- PermitUndo gives back the permit of an acquisition whose reply was lost:
-- it marks the acquisition's record undone for recordTTL, so an attempt of
-- it that reaches the server later takes nothing (PermitAcquire), and
-- returns the permit to the pool if the acquisition took it, announcing the
-- new count as a release does. Made again, it finds the permit gone and
-- changes nothing more.
-- Reply 1: the permit was given back; 0: the acquisition held none.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, the acquisition's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return int64
-- @commands publish spublish
-- @retryable
redis.call('set', KEYS[4], 'undone', 'px', ARGV[3])
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local value = redis.call('incr', KEYS[1])
redis.call(ARGV[2], KEYS[3], value)
return 1
