#!lua
-- RwReadAcquire takes or re-enters a read hold of a read-write lock in
-- Redisson's RReadWriteLock layout: hash <name> with field mode = read|write,
-- one field per reader (<client-id>:<owner-id> -> holds) and per writer
-- (<...>:write -> holds); each read hold n has its own lease key
-- <timeouts>:<n>, and the hash lives as long as the longest of them.
-- A new reader is refused while a writer waits (a live member of the
-- pending-writer set, deadlines in server time), so writers never starve;
-- owners that already read, and the write holder, may always (re-)read.
-- Reply {1, 1}: acquired; {2, holds}: re-entered; {0, pttl}: refused (pttl of
-- the lock, -2 when it is free but a writer is waiting).
-- @key    lock
-- @key    timeouts       {name}:<owner>:rwlock_timeout, prefix of this owner's read-hold lease keys
-- @key    writers        redisson_rwlock_writers:{name}, pending writers -> deadline (server ms)
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    writeOwner     string     the same owner's writer field, <owner>:write
-- @arg    nonce          int64      a new hold's mark, kept in its first lease key for the release to name (a shared owner's); 0: none (the key holds 1)
-- @return {status int64, value int64}
-- @error  NOT_RW   the lock is a hash without a mode: a Mutex, FairMutex or Redisson RLock holds the name
local function writerWaiting()
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('zremrangebyscore', KEYS[3], '-inf', now)
  return redis.call('zcard', KEYS[3]) > 0
end
local mark = 1
if ARGV[4] ~= '0' then
  mark = ARGV[4]
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  -- A hash without a mode is another kind of lock (Redisson's read and
  -- write locks would take it over): refuse it, change nothing.
  if redis.call('exists', KEYS[1]) == 1 then
    return redis.error_reply('NOT_RW the lock is held as a Mutex, FairMutex or Redisson RLock')
  end
  if writerWaiting() then
    return {0, -2}
  end
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], '1')
  redis.call('set', KEYS[2] .. ':1', mark, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, 1}
end
local reading = redis.call('hexists', KEYS[1], ARGV[2]) == 1
if (mode == 'read' and (reading or not writerWaiting())) or
   (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local holds = redis.call('hincrby', KEYS[1], ARGV[2], '1')
  if holds > 1 then
    mark = 1
  end
  redis.call('set', KEYS[2] .. ':' .. holds, mark, 'px', ARGV[1])
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  if holds == 1 then
    return {1, 1}
  end
  return {2, holds}
end
return {0, redis.call('pttl', KEYS[1])}
