-- MutexAcquire takes a reentrant lock or re-enters it, in Redisson's layout:
-- the lock is a hash whose only field is the owner (<client-id>:<owner-id>)
-- and whose value is the hold count; the key's PEXPIRE is the lease.
-- A fresh acquisition also draws the next fencing token from the counter.
-- Reply {1, token}: acquired; {2, holds}: re-entered; {0, pttl}: held by another owner.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name}); never expires
-- @arg    lease     duration
-- @arg    owner     string
-- @return {status int64, value int64}
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, redis.call('incr', KEYS[2])}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local holds = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {2, holds}
end
return {0, redis.call('pttl', KEYS[1])}
