#!lua flags=allow-oom
-- MutexRenew extends the lease of a lock this owner still holds (the watchdog,
-- and Extend). Reply true: renewed; false: the owner no longer holds it
-- (expired, deleted or taken over), so the holder has lost the lock.
-- An owner may release and lock again under the same field (shared through
-- its context, or by the owner id read from a lock context) while a renewal
-- or Extend of its earlier hold is still on its way, or given up on by the
-- caller and landing late: such calls name the fencing token of the hold they
-- were sent for (token, 0 for none), and a field whose hold was granted since
-- (the counter has moved past that token) is another hold's, whose lease they
-- leave alone (see MutexRelease). A counter that has expired (fenceIdle) drew
-- no token since.
-- Not retryable: rueidis would send a renewal whose connection broke again
-- on the next one, also after its hold ended (an Unlock that failed leaves
-- the lock only until its lease ends); the watchdog makes a failed renewal
-- again itself, while the hold lasts.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    token     int64     the fencing token of the hold, 0 for none
-- @return bool
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  if ARGV[3] ~= '0' then
    local drawn = redis.call('get', KEYS[2])
    if drawn and drawn ~= ARGV[3] then
      return 0
    end
  end
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
