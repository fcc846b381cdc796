#!lua flags=allow-oom
-- SemaphoreDelete removes a semaphore and its permit count, as Redisson's
-- RSemaphore.delete does. Waiters keep waiting: a deleted semaphore has no
-- permits until set again. Reply true: there was a semaphore; false: none.
-- @key    semaphore
-- @return bool
return redis.call('del', KEYS[1])
