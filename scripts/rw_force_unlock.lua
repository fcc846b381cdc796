#!lua flags=allow-oom
-- RwForceUnlock deletes a read-write lock whoever holds it and publishes
-- Redisson's message for the mode it deleted: "1" for a write lock (every
-- waiter retries, as RedissonWriteLock.forceUnlock), "0" for a read lock (as
-- RedissonReadLock.forceUnlock).
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the lock may be another owner's, taken after the first attempt freed it).
-- A repeat of a call that deleted the lock tells the waiters again while the
-- lock is still free (see below).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- A hash without a mode (a Mutex, FairMutex or Redisson RLock) fails with
-- NOT_RW, a string (a LeanMutex) with WRONGTYPE, and is left alone.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel        redisson_rwlock:{name}
-- @key    record         redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    recordTTL      duration
-- @arg    slack          duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return bool
-- @retryable
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @error  NOT_RW   the lock is a hash without a mode: a Mutex, FairMutex or Redisson RLock holds the name
-- @error  LATE      the call reached the server after its reservation ended; nothing changed
-- refusal is the error a publish of this call would fail with after its
-- writes, checked before them (Redis 7's acl_check_cmd) so that a refused
-- release changes nothing: NO_PUBLISH, saying whether the ACL user may not
-- run the publish command at all or may not publish to the channel, which
-- it names (any bytes: a control byte would cut the reply); UNKNOWN_COMMAND
-- when the server has no such command (SPUBLISH renamed away), which the
-- Client makes again with PUBLISH. nil: allowed, or a server before 7.0.
local function refusal(publish, channels)
  if not redis.acl_check_cmd then
    return nil
  end
  for _, ch in ipairs(channels) do
    local known, allowed = pcall(redis.acl_check_cmd, publish, ch, '0')
    if not known then
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the release message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(publish) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the release message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  return nil
end
local seen = redis.call('get', KEYS[3])
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[3]) < tonumber(ARGV[3]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  -- A repeat of a call that deleted the lock publishes "1" (every waiter
  -- retries) while the lock is still free: the first attempt may have
  -- failed at its publish, after its writes (a refused SPUBLISH, made
  -- again with PUBLISH), and the waiters would sleep until their next call.
  if seen == '1' and redis.call('exists', KEYS[1]) == 0 then
    local err = refusal(ARGV[1], {KEYS[2]})
    if err then
      return err
    end
    redis.call(ARGV[1], KEYS[2], '1')
  end
  return tonumber(seen)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false and redis.call('exists', KEYS[1]) == 1 then
  return redis.error_reply('NOT_RW the lock is held as a Mutex, FairMutex or Redisson RLock')
end
if redis.call('exists', KEYS[1]) == 1 then
  -- Checked before the delete: a publish refused after it failed the call
  -- with the lock gone and nobody told.
  local err = refusal(ARGV[1], {KEYS[2]})
  if err then
    return err
  end
end
local deleted = redis.call('del', KEYS[1])
redis.call('set', KEYS[3], deleted, 'px', ARGV[2])
if deleted == 0 then
  return 0
end
if mode == 'write' then
  redis.call(ARGV[1], KEYS[2], '1')
else
  redis.call(ARGV[1], KEYS[2], '0')
end
return 1
