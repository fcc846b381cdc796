#!lua
-- LatchTrySet sets a count-down latch's count, only if the latch is not
-- already counting, and publishes Redisson's "new count" message 1 on the
-- latch channel. A call that sets the count leaves its nonce in the record
-- key for recordTTL, so the same call made again after its reply was lost,
-- or reaching the server after such a retry, answers 1 and changes nothing,
-- even when the count was counted down to zero or deleted in between: the
-- record is read first, and neither CountDown nor Delete removes it. That
-- repeat publishes "1" again while the latch still counts: the first
-- attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH), and a Redisson waiter that missed it
-- keeps its latch open and polls the count in a loop instead of waiting.
-- Once the count reached zero or was deleted it publishes nothing: "1"
-- would close the latch the zero opened, and a Redisson waiter that read
-- the count before the zero would block on it.
-- Reply 1: set (by this call);
-- 0: already counting, nothing changed.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    latch
-- @key    channel   redisson_countdownlatch__channel__{name}
-- @key    record    redisson_countdownlatch_latch:{name}:set:<nonce>, this call's record: its nonce once it set the count
-- @arg    count     int64
-- @arg    nonce     string    this call's <client-id>:<n>
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @return bool
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @retryable
if redis.call('get', KEYS[3]) == ARGV[2] then
  -- Only while the latch still counts: after a zero (or a Delete) "1"
  -- would close a Redisson waiter's latch that the zero opened.
  local left = tonumber(redis.call('get', KEYS[1]))
  if left and left > 0 then
    redis.call(ARGV[3], KEYS[2], '1')
  end
  return 1
end
local value = redis.call('get', KEYS[1])
if value then
  if not tonumber(value) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
  return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call('set', KEYS[3], ARGV[2], 'px', ARGV[4])
redis.call(ARGV[3], KEYS[2], '1')
return 1
