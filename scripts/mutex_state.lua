-- MutexState reads a lock without changing it: how many owners hold it (0 or 1
-- for a mutex), this owner's hold count and the remaining lease in ms (-2: no
-- lock, -1: no expiry). A read-write lock's hash (its mode field) fails with
-- NOT_MUTEX, and a string (a LeanMutex's, a Semaphore's or a latch's) with
-- Redis's WRONGTYPE: neither is this lock's state.
-- @key    lock
-- @arg    owner     string
-- @return {owners int64, holds int64, ttl int64}
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @readonly
local held = redis.call('hmget', KEYS[1], ARGV[1], 'mode')
if held[2] then
  return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
end
local holds = tonumber(held[1] or '0')
return {redis.call('hlen', KEYS[1]), holds, redis.call('pttl', KEYS[1])}
