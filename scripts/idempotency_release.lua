-- IdempotencyRelease drops a claim that will not be completed (the request
-- failed in a way that is not stored), so the client can retry with the key.
-- Reply 1: released; 0: not claimed by this token (or already completed).
-- @key    record
-- @arg    token  string
-- @return int64
-- @retryable
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[1] == '1' and rec[2] == ARGV[1] then
  redis.call('del', KEYS[1])
  return 1
end
return 0
