-- SemaphoreDrain takes every available permit at once.
-- Reply: how many permits were taken (0 when none were available).
-- @key    semaphore
-- @return int64
local value = tonumber(redis.call('get', KEYS[1]) or '0')
if value <= 0 then
  return 0
end
redis.call('set', KEYS[1], 0, 'keepttl')
return value
