#!lua flags=allow-oom
-- MutexReleaseShared is MutexRelease for an owner shared through its
-- context (WithOwner), which may lock again under the same field while an
-- earlier release of it is still on its way (its call timed out, and its
-- bytes reach Redis later on the connection that was closed). The release
-- names the fencing token of the hold it gives up; a field whose hold was
-- granted since (the counter has moved past that token) is another hold's,
-- and the release changes nothing. A counter that has expired (fenceIdle)
-- drew no token since, so the hold is still the one named.
-- Reply as MutexRelease: nil: not held by this hold, nothing changed; 0:
-- still held (one hold fewer); 1: released; 2: released and a Go waiter
-- woken by name.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    latch     redisson_unlock_latch:{name}:<request-id>
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    latchTTL  duration
-- @arg    retry     bool      true when an earlier attempt may have run
-- @arg    vouched   bool      the caller's hold was live when it began releasing
-- @arg    token     int64     the fencing token of the hold released
-- @return int64?
-- @commands publish spublish
if ARGV[5] == '1' then
  local seen = redis.call('get', KEYS[3])
  if seen then
    return tonumber(seen)
  end
end
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if not holds then
  if ARGV[5] == '1' and ARGV[6] == '1' then
    return 1
  end
  return nil
end
local drawn = redis.call('get', KEYS[6])
if drawn and drawn ~= ARGV[7] then
  return nil
end
if holds > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], -1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[3], 0, 'px', ARGV[4])
  return 0
end
redis.call('del', KEYS[1])
local freed = 1
redis.call(ARGV[3], KEYS[2], '0')
local w = redis.call('zpopmin', KEYS[4])
if w[1] then
  redis.call(ARGV[3], KEYS[5] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1])
  freed = 2
end
if ARGV[6] ~= '1' then
  redis.call('set', KEYS[3], freed, 'px', ARGV[4])
end
return freed
