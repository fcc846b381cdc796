#!lua flags=allow-oom
-- LeanForceUnlock deletes a lean lock whoever holds it. A key of another lock
-- kind (a Mutex's hash) fails with WRONGTYPE, a string holding no owner (a
-- Semaphore's or CountDownLatch's count, another program's value) with
-- NOT_LEAN, and is left alone.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the lock may be another owner's, taken after the first attempt freed it).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    record    redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @arg    recordTTL duration
-- @arg    slack     duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return bool
-- @retryable
-- @error  NOT_LEAN  the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote
-- @error  LATE      the call reached the server after its reservation ended; nothing changed
local seen = redis.call('get', KEYS[2])
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[2]) < tonumber(ARGV[2]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  return tonumber(seen)
end
local deleted = 0
local v = redis.call('get', KEYS[1])
if v then
  if not string.find(v, ':', 1, true) then
    return redis.error_reply('NOT_LEAN the key holds a string that is no LeanMutex owner: the count of a Semaphore or CountDownLatch, or a value another program wrote')
  end
  deleted = redis.call('del', KEYS[1])
end
redis.call('set', KEYS[2], deleted, 'px', ARGV[1])
return deleted
