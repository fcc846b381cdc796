#!lua
-- RwWriteAcquire takes or re-enters the write hold of a read-write lock
-- (Redisson layout: mode = write, field <owner>:write -> holds) and draws a
-- fencing token for a fresh hold. A writer that cannot take it now and will
-- wait registers in the pending-writer set with a deadline of server time +
-- waiterTimeout (refreshed on every call), which keeps new readers out until
-- it gets its turn, gives up, or stops calling. The set itself expires
-- waiterTimeout after the last registration, so it never outlives its waiters.
-- Reply {1, token}: acquired; {2, holds}: re-entered; {0, pttl}: held by others,
-- {0, pttl, place} when it registered the caller: place is the deadline it
-- registered, which names this registration to the caller's withdrawal
-- (RwCancel): an owner shared through its context has one member for all
-- its waits.
-- @key    lock
-- @key    writers        redisson_rwlock_writers:{name}
-- @key    fence          redisson_lock_token:{name}
-- @key    prefix         {name}, the prefix of every owner's lease keys
-- @arg    lease          duration
-- @arg    owner          string     the owner's reader field
-- @arg    writeOwner     string     <owner>:write
-- @arg    waiterTimeout  duration
-- @arg    enqueue        bool       register as a pending writer when refused
-- @arg    fenceIdle      duration   how long a token counter lives from its start (see MutexAcquire)
-- @return {status int64, value int64, place int64?}
-- @error  UPGRADE  the owner holds a read lock; a write lock would wait for itself
-- @error  NOT_RW   the lock is a hash without a mode: a Mutex, FairMutex or Redisson RLock holds the name
-- @error  BAD_FENCE  the fencing-token counter holds no integer from 0 to 2^53 - 2: tokens drawn from it could not rise above the last
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  -- A hash without a mode is another kind of lock (Redisson's read and
  -- write locks would take it over): refuse it, change nothing.
  if redis.call('exists', KEYS[1]) == 1 then
    return redis.error_reply('NOT_RW the lock is held as a Mutex, FairMutex or Redisson RLock')
  end
  -- The caller's pending-writer entry goes first (it leaves on success;
  -- a refused INCR gives it back, below), then the token: a
  -- pending-writer key of another type or a counter that holds no integer from 0 to 2^53 - 2 fails the
  -- call before the grant is written (a grant no one holds would keep
  -- everyone out for its lease). Above 2^53 Lua's numbers (doubles) cannot
  -- tell consecutive integers apart, so tokens would repeat (and 2^63 - 1
  -- would come back negative), and a negative counter would still be
  -- negative once lifted by the time: the INCR is taken back.
  local pending = redis.call('zrem', KEYS[2], ARGV[3])
  local token = redis.pcall('incr', KEYS[3])
  local refused
  if type(token) == 'table' then
    -- Only the counter's value is refused here: another error (an ACL
    -- without INCR) is passed on as Redis gave it.
    refused = token.err
    if string.find(refused, '^WRONGTYPE') or string.find(refused, 'not an integer') or string.find(refused, 'overflow') then
      refused = 'BAD_FENCE no token can be drawn from ' .. KEYS[3]
    end
  elseif token < 1 or token >= 9007199254740992 then
    redis.call('decr', KEYS[3])
    refused = 'BAD_FENCE no token can be drawn from ' .. KEYS[3]
  end
  if refused then
    -- A waiting writer's registration is given back (its deadline
    -- refreshed, as every call of it does): the writer gives up, and its
    -- withdrawal (RwCancel) wakes the readers it held back. Taken out
    -- here without a word, they would sleep until their fallback timer.
    if pending == 1 then
      local t = redis.call('time')
      redis.call('zadd', KEYS[2], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[4]), ARGV[3])
      if redis.call('pexpire', KEYS[2], ARGV[4], 'gt') == 0 and redis.call('pttl', KEYS[2]) == -1 then
        redis.call('pexpire', KEYS[2], ARGV[4])
      end
    end
    return redis.error_reply(refused)
  end
  if token < 1099511627776 then
    local t = redis.call('time')
    token = redis.call('incrby', KEYS[3], t[1] .. string.sub('00000' .. t[2], -6))
    redis.call('pexpire', KEYS[3], ARGV[6])
  end
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[3], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, token}
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  local holds = redis.call('hincrby', KEYS[1], ARGV[3], '1')
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return {2, holds}
end
if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  -- Only while one of the owner's read lease keys is left: a field whose
  -- leases all ran out while other readers kept the lock (Redisson's layout
  -- keeps it until the lock ends, see RwReadRelease) is no read hold, and
  -- the writer waits for the others as any writer does.
  for i = 1, tonumber(redis.call('hget', KEYS[1], ARGV[2])) or 0 do
    if redis.call('exists', KEYS[4] .. ':' .. ARGV[2] .. ':rwlock_timeout:' .. i) == 1 then
      return redis.error_reply('UPGRADE owner holds a read lock')
    end
  end
end
if ARGV[5] == '1' then
  local t = redis.call('time')
  local place = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[4])
  redis.call('zadd', KEYS[2], place, ARGV[3])
  -- GT: never cut short another writer's longer registration.
  if redis.call('pexpire', KEYS[2], ARGV[4], 'gt') == 0 and redis.call('pttl', KEYS[2]) == -1 then
    redis.call('pexpire', KEYS[2], ARGV[4])
  end
  return {0, redis.call('pttl', KEYS[1]), place}
end
return {0, redis.call('pttl', KEYS[1])}
