-- IdempotencyRenew extends a running claim by ttl while its request still runs.
-- Reply 1: extended; 0: not claimed by this token any more.
-- @key    record
-- @arg    token  string
-- @arg    ttl    duration
-- @return int64
-- @retryable
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[1] == '1' and rec[2] == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0
