#!lua flags=allow-oom
-- LeanRenew extends the lease of a lean lock this owner still holds (the
-- watchdog): compare and PEXPIRE.
-- Reply true: renewed; false: the owner no longer holds it.
-- @key    lock
-- @arg    lease     duration
-- @arg    owner     string
-- @return bool
-- @retryable
if redis.call('get', KEYS[1]) == ARGV[2] then
  return redis.call('pexpire', KEYS[1], ARGV[1])
end
return 0
