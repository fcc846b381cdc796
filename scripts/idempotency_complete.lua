#!lua flags=allow-oom
-- IdempotencyComplete stores the response of the request holding the claim
-- and keeps the record for ttl, so duplicates get it replayed. The scope's
-- usage (see IdempotencyReserve) accounts the response's bytes plus overhead
-- until the record expires.
-- Reply 1: stored (also when this token had already stored it);
-- 0: the claim expired, was released or belongs to another request, nothing
-- stored.
-- Not marked retryable: the client does not repeat it by itself. The
-- store repeats it while its outcome is unknown (then in the background),
-- and hands a call that could not be sent to the background at once.
-- @key    record
-- @key    usage
-- @key    sizes
-- @arg    token     string
-- @arg    response  bytes
-- @arg    ttl       duration
-- @arg    overhead  int64     bytes accounted besides the response
-- @return int64
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[2] ~= ARGV[1] or rec[1] == '3' then
  return 0
end
if rec[1] == '1' then
  redis.call('hset', KEYS[1], 'state', '2', 'resp', ARGV[2])
  redis.call('pexpire', KEYS[1], ARGV[3])
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local size = string.len(ARGV[2]) + tonumber(ARGV[4])
  local old = tonumber(redis.call('hget', KEYS[3], KEYS[1]) or '0')
  redis.call('hset', KEYS[3], KEYS[1], size)
  redis.call('hincrby', KEYS[3], '#total', size - old)
  redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), KEYS[1])
  if redis.call('pttl', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('pexpire', KEYS[2], ARGV[3])
  end
  if redis.call('pttl', KEYS[3]) < tonumber(ARGV[3]) then
    redis.call('pexpire', KEYS[3], ARGV[3])
  end
end
return 1
