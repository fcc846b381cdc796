#!lua
-- LeanAcquireFenced takes a lean lock (a string key holding the owner) like
-- SET key owner NX GET PX lease, and a fresh acquisition also draws the next
-- fencing token from the lock's counter, as MutexAcquire does: a missing
-- counter starts at the server's TIME in microseconds (above every token an
-- expired counter can have handed out) and expires fenceIdle later; so is a
-- counter below 2^40, which Redisson's RFencedLock made again from 1. A key of
-- another lock kind (a Mutex's hash) fails with WRONGTYPE; a string holding
-- no owner (<client-id>:<owner-id>), a Semaphore's or CountDownLatch's count
-- or another program's value, with NOT_LEAN, and nothing changes.
-- Reply > 0: acquired, the value is the fencing token; -1: held by another
-- owner; -2: held by this owner already.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    owner     string
-- @arg    lease     duration
-- @arg    fenceIdle duration  how long a new counter lives
-- @return int64
-- @error  NOT_LEAN  the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote
-- @error  BAD_FENCE  the fencing-token counter holds no integer from 0 to 2^53 - 2: tokens drawn from it could not rise above the last
local holder = redis.call('set', KEYS[1], ARGV[1], 'NX', 'GET', 'PX', ARGV[2])
if holder then
  if holder == ARGV[1] then
    return -2
  end
  if not string.find(holder, ':', 1, true) then
    return redis.error_reply('NOT_LEAN the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote')
  end
  return -1
end
-- A counter that holds no integer, a negative one or one of 2^53 - 1 or
-- more fails the call; the lock just set is taken back first, so nothing
-- changes. Above 2^53 Lua's numbers (doubles) cannot tell consecutive
-- integers apart, so tokens would repeat (and 2^63 - 1 would come back
-- negative), and a negative counter would still be negative once lifted by
-- the time: the INCR is taken back too.
local token = redis.pcall('incr', KEYS[2])
if type(token) == 'table' then
  redis.call('del', KEYS[1])
  -- Only the counter's value is refused here: another error (an ACL
  -- without INCR) is passed on as Redis gave it.
  local e = token.err
  if not (string.find(e, '^WRONGTYPE') or string.find(e, 'not an integer') or string.find(e, 'overflow')) then
    return redis.error_reply(e)
  end
  return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[2])
elseif token < 1 or token >= 9007199254740992 then
  redis.call('decr', KEYS[2])
  redis.call('del', KEYS[1])
  return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[2])
end
if token < 1099511627776 then
  local t = redis.call('time')
  token = redis.call('incrby', KEYS[2], t[1] .. string.sub('00000' .. t[2], -6))
  redis.call('pexpire', KEYS[2], ARGV[3])
end
return token
