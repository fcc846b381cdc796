-- LatchCount reads a latch's count (0 when it is not counting).
-- @key    latch
-- @return int64
-- @readonly
return tonumber(redis.call('get', KEYS[1]) or '0')
