-- PermitAvailable returns the permits of an expirable semaphore free right
-- now, after returning to the pool every permit whose lease ended (server
-- clock), and announcing them if any. Made again after its reply was lost,
-- it finds them returned already and answers the count.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @key    channel   redisson_sc:{name}
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @commands publish spublish
-- @retryable
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, 1000)
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local value = redis.call('incrby', KEYS[1], #expired)
  if value > 0 then
    redis.call(ARGV[1], KEYS[3], value)
  end
  return value
end
return tonumber(redis.call('get', KEYS[1]) or '0')
