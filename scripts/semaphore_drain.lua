#!lua
-- SemaphoreDrain sets a semaphore's count to 0, as Redisson's drainPermits
-- does, and returns what the count was: the permits taken when it was
-- positive; a zero or negative count (a deficit AddPermits left) is reset to
-- 0 too and returned as it was. A semaphore never set is left unset (reply 0).
-- The key's TTL, if any, is kept.
-- @key    semaphore
-- @return int64
local value = redis.call('get', KEYS[1])
if not value then
  return 0
end
redis.call('set', KEYS[1], 0, 'keepttl')
return tonumber(value)
