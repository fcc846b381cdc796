-- RwState reads a read-write lock without changing it: its mode (nil when
-- free), this owner's read and write hold counts, and the remaining lease in
-- ms (-2: no lock, -1: no expiry). A hash without a mode (a Mutex, FairMutex
-- or Redisson RLock) fails with NOT_RW, a string (a LeanMutex) with WRONGTYPE.
-- reads is the owner's field as the hash has it, which a release gives back;
-- leased counts it only while one of the owner's read lease keys is left:
-- a field whose leases all ran out while other readers kept the lock
-- (Redisson's layout keeps it until the lock ends, see RwReadRelease) holds
-- nothing, and leased is 0.
-- @key    lock
-- @key    prefix         {name}, the prefix of every owner's lease keys
-- @arg    owner          string
-- @arg    writeOwner     string
-- @return {mode string?, reads int64, writes int64, ttl int64, leased int64}
-- @readonly
-- @error  NOT_RW   the lock is a hash without a mode: a Mutex, FairMutex or Redisson RLock holds the name
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false and redis.call('exists', KEYS[1]) == 1 then
  return redis.error_reply('NOT_RW the lock is held as a Mutex, FairMutex or Redisson RLock')
end
local reads = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
local writes = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0')
local leased = 0
for i = 1, reads or 0 do
  if redis.call('exists', KEYS[2] .. ':' .. ARGV[1] .. ':rwlock_timeout:' .. i) == 1 then
    leased = reads
    break
  end
end
return {mode, reads, writes, redis.call('pttl', KEYS[1]), leased}
