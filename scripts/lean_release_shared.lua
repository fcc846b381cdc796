#!lua flags=allow-oom
-- LeanReleaseShared is LeanRelease for a fenced lean lock (WithFencing) whose
-- owner is shared through its context (WithOwner), which may lock again
-- while an earlier release of it is still on its way (see
-- MutexRelease): the release names the fencing token of the hold it
-- gives up, and a key taken since under the same owner (the counter has
-- moved past that token) is another hold's, so the release changes nothing.
-- A counter that has expired drew no token since.
-- Reply true: released; false: not held by this hold, nothing changed.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    owner     string
-- @arg    token     int64     the fencing token of the hold released
-- @return bool
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 0
end
local drawn = redis.call('get', KEYS[2])
if drawn and drawn ~= ARGV[2] then
  return 0
end
return redis.call('del', KEYS[1])
