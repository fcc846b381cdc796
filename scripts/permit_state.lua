-- PermitState reads an expirable semaphore without changing it: the permits
-- free now (the counter plus the held permits whose lease has ended, which
-- the next call returns to the pool) and the permits held under a lease that
-- has not ended, by the server clock.
-- @key    semaphore
-- @key    timeouts  {name}:timeout
-- @return {available int64, held int64}
-- @readonly
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zcount', KEYS[2], 0, now)
local held = redis.call('zcount', KEYS[2], '(' .. now, '+inf')
return {tonumber(redis.call('get', KEYS[1]) or '0') + expired, held}
