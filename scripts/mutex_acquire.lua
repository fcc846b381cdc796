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
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    fenceIdle duration  how long a counter lives from its start
-- @return int64
if redis.call('exists', KEYS[1]) == 0 then
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
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  ttl = 0
end
return -1 - ttl
