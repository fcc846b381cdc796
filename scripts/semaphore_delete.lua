#!lua flags=allow-oom
-- SemaphoreDelete removes a semaphore and its permit count, as Redisson's
-- RSemaphore.delete does, and the record of the TrySetPermits that set it.
-- Waiters keep waiting: a deleted semaphore has no permits until set again.
-- Reply true: there was a semaphore; false: none.
-- @key    semaphore
-- @key    record    redisson_sc_latch:{name}:set
-- @return bool
local n = redis.call('del', KEYS[1])
redis.call('del', KEYS[2])
return n
