-- MutexAcquire takes a reentrant lock or re-enters it, in Redisson's layout:
-- the lock is a hash whose only field is the owner (<client-id>:<owner-id>)
-- and whose value is the hold count; the key's PEXPIRE is the lease.
-- A fresh acquisition also draws the next fencing token from the counter.
-- A missing counter starts at the server's TIME in microseconds and expires
-- fenceIdle later; it is not re-armed on every grant (that PEXPIRE would cost
-- a fifth of the grant). A restarted counter is above every token the expired
-- one handed out, as long as that one handed out fewer than one token per
-- microsecond of its life (it grew by one per grant from its own start time),
-- so tokens stay strictly increasing across expiry.
-- The reply is one integer (a table reply costs Redis more than the whole
-- acquisition): > 0 acquired, the value is the fencing token; 0 re-entered;
-- < 0 held by another owner, -1 - reply is its remaining lease in ms.
-- A refused caller that will wait (waiterTTL > 0) registers in the waiter set,
-- a sorted set of fields scored by the server's clock (ms) at registration, so
-- a release wakes the longest-registered Go waiter alone. A waiter woken by a
-- release was taken out of the set; if it is refused again it passes that
-- wake's score as since and gets its place back. The set expires waiterTTL
-- after the last registration (live waiters call again before that).
-- A registered caller that was not taken out by a wake passes leave: when it
-- gets the lock it leaves the set, which keeps no waiter that stopped waiting.
-- A polite caller does not take a free lock (it may re-enter its own): a
-- release has just woken a waiter, and taking the lock from under it would
-- send that waiter back to wait, which is what makes waits long under
-- contention.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    fenceIdle duration  how long a counter lives from its start
-- @arg    waiterTTL string    the set's expiry in ms; "0": the caller will not wait, do not register it (a string formatted once per handle, not per call)
-- @arg    since     int64     the place to take back (a woken waiter's score); 0: a new place
-- @arg    leave     bool      on success, take the caller out of the waiter set
-- @arg    polite    bool      a release just woke a waiter: queue behind it even if the lock is free
-- @return int64
if ARGV[7] ~= '1' and redis.call('exists', KEYS[1]) == 0 then
  if ARGV[6] == '1' then
    redis.call('zrem', KEYS[3], ARGV[2])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  local token = redis.call('incr', KEYS[2])
  if token == 1 then
    local t = redis.call('time')
    token = redis.call('incrby', KEYS[2], t[1] .. string.sub('00000' .. t[2], -6))
    redis.call('pexpire', KEYS[2], ARGV[3])
  end
  return token
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  if ARGV[6] == '1' then
    redis.call('zrem', KEYS[3], ARGV[2])
  end
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  ttl = 0
end
if ARGV[4] ~= '0' then
  if ARGV[5] ~= '0' then
    redis.call('zadd', KEYS[3], ARGV[5], ARGV[2])
  else
    local t = redis.call('time')
    redis.call('zadd', KEYS[3], 'nx', t[1] * 1000 + math.floor(t[2] / 1000), ARGV[2])
  end
  redis.call('pexpire', KEYS[3], ARGV[4])
end
return -1 - ttl
