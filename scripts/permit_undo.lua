#!lua flags=allow-oom
-- PermitUndo gives back the permit of an acquisition whose reply was lost:
-- it marks the acquisition's record undone for recordTTL, so an attempt of
-- it that reaches the server later takes nothing (PermitAcquire), and
-- returns the permit to the pool if the acquisition took it, announcing the
-- new count as a release does. Made again, it finds the permit gone and
-- changes nothing more, but announces the count again when the first
-- attempt gave the permit back (the record says "given"): that attempt may
-- have failed at its publish, after its writes (a refused SPUBLISH, made
-- again with PUBLISH).
-- When the acquisition holds the permit and the key now holds no count (a
-- LeanMutex's owner) it fails with NOT_COUNT, and another kind's hash with
-- WRONGTYPE, before anything is written: the record is not marked.
-- Reply 1: the permit was given back; 0: the acquisition held none.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @key    record    redisson_sc_latch:{name}:<client-id>:<n>, the acquisition's record
-- @arg    id        bytes     16 raw bytes, as Redisson sends a permit id
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @retryable
if redis.call('zscore', KEYS[2], ARGV[1]) then
  local count = redis.call('get', KEYS[1])
  if count and not tonumber(count) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
end
if redis.call('get', KEYS[4]) == 'given' then
  local count = redis.call('get', KEYS[1])
  if count and tonumber(count) then
    redis.call(ARGV[2], KEYS[3], count)
  end
  return 1
end
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  redis.call('set', KEYS[4], 'undone', 'px', ARGV[3])
  return 0
end
redis.call('set', KEYS[4], 'given', 'px', ARGV[3])
local value = redis.call('incr', KEYS[1])
redis.call(ARGV[2], KEYS[3], value)
return 1
