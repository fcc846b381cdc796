#!lua flags=allow-oom
-- LeanRenew extends the lease of a lean lock this owner still holds (the
-- watchdog, and Extend): compare and PEXPIRE. A call for a hold that drew a
-- fencing token names it, and a key taken since under the same owner (the
-- counter has moved past that token) is another hold's, whose lease it
-- leaves alone (see LeanReleaseShared).
-- Reply true: renewed; false: the owner no longer holds it.
-- Not retryable: rueidis would send a renewal whose connection broke again
-- on the next one, also after its hold ended (an Unlock that failed leaves
-- the lock only until its lease ends); the watchdog makes a failed renewal
-- again itself, and Extend a call whose connection broke, while the hold
-- lasts.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    token     int64     the fencing token of the hold, 0 for none
-- @return bool
if redis.call('get', KEYS[1]) == ARGV[2] then
  if ARGV[3] ~= '0' then
    local drawn = redis.call('get', KEYS[2])
    if drawn and drawn ~= ARGV[3] then
      return 0
    end
  end
  return redis.call('pexpire', KEYS[1], ARGV[1])
end
return 0
