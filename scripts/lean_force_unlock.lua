#!lua flags=allow-oom
-- LeanForceUnlock deletes a lean lock whoever holds it. A key of another lock
-- kind (a Mutex's hash) fails with WRONGTYPE and is left alone.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @return bool
-- @retryable
if redis.call('get', KEYS[1]) then
  return redis.call('del', KEYS[1])
end
return 0
