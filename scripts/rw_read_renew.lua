#!lua flags=allow-oom
-- RwReadRenew extends an owner's read holds (the watchdog): every lease key of
-- the owner and, if shorter, the lock hash. Reply false when the owner no
-- longer reads (expired, deleted), so the holder has lost the lock.
-- Not retryable: rueidis would send a renewal whose connection broke again
-- on the next one, also after its hold ended (an Unlock that failed leaves
-- the lock only until its lease ends); the watchdog makes a failed renewal
-- again itself, while the hold lasts.
-- @key    lock
-- @key    timeouts       {name}:<owner>:rwlock_timeout
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    nonce          int64      the mark of a shared owner's hold (RwReadAcquire), 0: no check
-- @return bool
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if not holds then
  return 0
end
if ARGV[3] ~= '0' then
  -- A first lease key marked otherwise (not 1) is a newer hold of the
  -- owner, taken since this call was sent: not held (see RwReadRelease).
  local mark = redis.call('get', KEYS[2] .. ':1')
  if mark and mark ~= '1' and mark ~= ARGV[3] then
    return 0
  end
end
for i = 1, holds do
  -- PEXPIRE keeps the first key's mark (RwReadAcquire); a key that expired
  -- is made again.
  if redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1]) == 0 then
    redis.call('set', KEYS[2] .. ':' .. i, '1', 'px', ARGV[1])
  end
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
return 1
