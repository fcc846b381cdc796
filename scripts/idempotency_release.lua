#!lua flags=allow-oom
-- IdempotencyRelease drops a claim that will not be completed (the request
-- failed in a way that is not stored), so the client can retry with the key,
-- and gives its bytes back to the scope's usage (see IdempotencyReserve).
-- When the token holds no running claim on the key (the key has no record,
-- or another request's), it marks the token released (KEYS[4], kept
-- for ttl): a reserve of that token still in flight on another connection,
-- whose caller gave up waiting for it, then claims nothing when it arrives,
-- also after the request that held the key meanwhile has released it, while
-- any other request's reserve takes the key as if it were free. With again
-- (an attempt of the token's reserve may still be on its way: one whose
-- connection broke under it, or one given up), it marks the token released
-- also when it drops the token's claim: that attempt, arriving after, claims
-- nothing either. Without, a release that drops the claim leaves nothing
-- behind.
-- Reply 1: released; 0: not claimed by this token (or already completed).
-- Not marked retryable: the client does not repeat it by itself. The
-- store repeats it while its outcome is unknown (then in the background),
-- and hands a call that could not be sent to the background at once.
-- @key    record
-- @key    usage
-- @key    sizes
-- @key    released  the token's release mark
-- @arg    token  string
-- @arg    ttl    duration
-- @arg    again  bool      an attempt of the token's reserve may still be on its way
-- @return int64
local rec = redis.call('hmget', KEYS[1], 'state', 'token')
if rec[1] == '1' and rec[2] == ARGV[1] then
  redis.call('del', KEYS[1])
  local sz = tonumber(redis.call('hget', KEYS[3], KEYS[1]) or '0')
  redis.call('hdel', KEYS[3], KEYS[1])
  redis.call('zrem', KEYS[2], KEYS[1])
  -- The scope's last record gone: drop its accounting too, so a request
  -- that never ran leaves nothing behind.
  -- 0 - sz, not -sz: a missing size is 0, and -0 reaches Redis as "-0",
  -- which it refuses as an integer.
  if redis.call('hincrby', KEYS[3], '#total', 0 - sz) <= 0 and redis.call('hlen', KEYS[3]) == 1 then
    redis.call('del', KEYS[3])
  end
  if ARGV[3] == '1' then
    redis.call('set', KEYS[4], '1', 'px', ARGV[2])
  end
  return 1
end
redis.call('set', KEYS[4], '1', 'px', ARGV[2])
return 0
