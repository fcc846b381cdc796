-- IdempotencyComplete stores the response of the request holding the claim
-- and keeps the record for ttl, so duplicates get it replayed.
-- Reply 1: stored (also when this token had already stored it);
-- 0: the claim expired, was released or belongs to another request, nothing
-- stored.
-- @key    record
-- @arg    token     string
-- @arg    response  bytes
-- @arg    ttl       duration
-- @return int64
-- @retryable
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[2] ~= ARGV[1] or rec[1] == '3' then
  return 0
end
if rec[1] == '1' then
  redis.call('hset', KEYS[1], 'state', 2, 'resp', ARGV[2])
  redis.call('pexpire', KEYS[1], ARGV[3])
end
return 1
