#!lua flags=allow-oom
-- RwWriteRenew renews a write hold (the watchdog and Extend): the lock's
-- expiry becomes the lease, or the longest lease left of the writer's own
-- read holds when that is longer (in write mode only the writer can hold
-- reads), so renewing or shortening the write never ends those reads early.
-- A call names the hold's fencing token, and a write field granted since (the
-- counter has moved past that token) is another hold's, whose lease it leaves
-- alone (see MutexRenew).
-- @key    lock
-- @key    timeouts       {name}:<owner>:rwlock_timeout, the owner's read lease keys
-- @key    fence          redisson_lock_token:{name}
-- @arg    lease          duration
-- @arg    writeOwner     string     the write field, <owner>:write
-- @arg    readOwner      string     the same owner's read field
-- @arg    token          int64      the fencing token of the hold, 0 for none
-- @return bool
-- @retryable
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return 0
end
if ARGV[4] ~= '0' then
  local drawn = redis.call('get', KEYS[3])
  if drawn and drawn ~= ARGV[4] then
    return 0
  end
end
local ttl = tonumber(ARGV[1])
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
if reads then
  for i = 1, reads do
    local left = redis.call('pttl', KEYS[2] .. ':' .. i)
    if left > ttl then
      ttl = left
    end
  end
end
redis.call('pexpire', KEYS[1], ttl)
return 1
