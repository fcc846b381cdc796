#!lua flags=allow-oom
-- IdempotencyRenew extends a running claim by ttl while its request still
-- runs, in the record and in the scope's usage (see IdempotencyReserve).
-- Reply 1: extended; 0: not claimed by this token any more.
-- @key    record
-- @key    usage
-- @key    sizes
-- @arg    token  string
-- @arg    ttl    duration
-- @return int64
-- @retryable
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[1] == '1' and rec[2] == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('zadd', KEYS[2], 'xx', now + tonumber(ARGV[2]), KEYS[1])
  if redis.call('pttl', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[2], ARGV[2])
  end
  if redis.call('pttl', KEYS[3]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[3], ARGV[2])
  end
  return 1
end
return 0
