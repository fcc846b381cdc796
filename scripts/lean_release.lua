#!lua flags=allow-oom
-- LeanRelease deletes a lean lock (LeanMutex: a plain string key whose value
-- is the owner) if the caller still owns it: compare and delete. A retry
-- after a lost reply is settled by the client from the hold's loss deadline,
-- so the release writes nothing but the DEL.
-- Reply true: released; false: not held by this owner, nothing changed.
-- @key    lock
-- @arg    owner     string
-- @return bool
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
