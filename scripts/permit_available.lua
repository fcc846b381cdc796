-- PermitAvailable returns the permits of an expirable semaphore free right
-- now, after returning to the pool the permits whose lease ended (server
-- clock; up to 1000 a call) and announcing them if any. Ended leases beyond
-- those 1000 are counted as free too, as PermitState counts them: the next
-- calls return them. Made again after its reply was lost, it finds them
-- returned already and answers the count.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    rewake    bool      a repeat after a refused SPUBLISH: announce the free permits, as the first attempt may have reclaimed expired ones and failed at its publish
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @retryable
local count = redis.call('get', KEYS[1])
if count and not tonumber(count) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[2], '0', now, 'limit', '0', '1000')
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then
    redis.call(ARGV[1], KEYS[3], value)
  end
  -- Leases that ended beyond this call's 1000 are free as well.
  return value + redis.call('zcount', KEYS[2], '0', now)
end
local value = tonumber(count or '0')
if ARGV[2] == '1' and value > 0 then
  -- The attempt repeated here reclaimed them (its publish failed after):
  -- nothing is left to reclaim, and the waiters have not heard.
  redis.call(ARGV[1], KEYS[3], value)
end
return value
