-- MutexState reads a lock without changing it: how many owners hold it (0 or 1
-- for a mutex), this owner's hold count and the remaining lease in ms (-2: no
-- lock, -1: no expiry).
-- @key    lock
-- @arg    owner     string
-- @return {owners int64, holds int64, ttl int64}
-- @readonly
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
return {redis.call('hlen', KEYS[1]), holds, redis.call('pttl', KEYS[1])}
