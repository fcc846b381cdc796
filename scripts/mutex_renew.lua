#!lua flags=allow-oom
-- MutexRenew extends the lease of a lock this owner still holds (the watchdog).
-- Reply true: renewed; false: the owner no longer holds it (expired, deleted or
-- taken over), so the holder has lost the lock.
-- @key    lock
-- @arg    lease     duration
-- @arg    owner     string
-- @return bool
-- @retryable
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
