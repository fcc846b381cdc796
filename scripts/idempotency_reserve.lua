-- IdempotencyReserve claims an idempotency key for the request that brings it
-- first. The record is a hash: state (1 running, 2 done), fp (the request
-- fingerprint), token (the claiming request's random id) and, once done, resp
-- (the stored response). A claim lasts ttl unless renewed or completed.
-- State 3 is a tombstone IdempotencyRelease leaves for a token whose reserve
-- had not arrived yet: that token claims nothing, any other claims the key.
-- Reply {0, nil, nil}: claimed by this token, run the request (also when this
-- token already holds the claim, so a retry after a lost reply is safe);
-- {1, fp, nil}: another request with this key is running;
-- {2, fp, resp}: completed, replay resp;
-- {3, nil, nil}: this token's reservation was released before it arrived.
-- @key    record
-- @arg    fingerprint  string
-- @arg    token        string
-- @arg    ttl          duration
-- @return {state int64, fingerprint string?, response bytes?}
-- @retryable
local rec = redis.call('hmget', KEYS[1], 'state', 'fp', 'token', 'resp')
if rec[1] == '3' and rec[3] == ARGV[2] then
  return {3, false, false}
end
if not rec[1] or rec[1] == '3' then
  redis.call('del', KEYS[1])
  redis.call('hset', KEYS[1], 'state', 1, 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('pexpire', KEYS[1], ARGV[3])
  return {0, false, false}
end
if rec[1] == '2' then
  return {2, rec[2], rec[4]}
end
if rec[3] == ARGV[2] then
  return {0, false, false}
end
return {1, rec[2], false}
