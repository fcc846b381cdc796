#!lua flags=allow-oom
-- MutexForceUnlock deletes a lock whoever holds it and wakes its waiters:
-- Redisson's with "0", and the longest-registered Go waiter as MutexRelease
-- does.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the lock may be another owner's, taken after the first attempt freed it).
-- A repeat of a call that deleted the lock, whose first attempt failed at
-- its publish (again), wakes the waiters again while the lock is still free
-- (see below).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    record    redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    recordTTL duration
-- @arg    slack     duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @arg    again     bool       a repeat of an attempt that failed at its publish, after its writes: wake as it was to
-- @return bool
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @retryable
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @error  LATE      the call reached the server after its reservation ended; nothing changed
-- wake publishes Redisson's "0" and wakes the longest-registered Go waiter
-- by name.
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
-- wakeChannels is the wake channel of the first waiter, the one the call
-- wakes first, as a release checks it; a later one is checked before it is
-- taken out (wake).
local function wakeChannels(waiters, prefix)
  local channels = {}
  for _, w in ipairs(redis.call('zrange', waiters, '0', '0')) do
    channels[#channels + 1] = prefix .. ':' .. string.match(w, '^[^:]*')
  end
  return channels
end
local function wake()
  redis.call(ARGV[1], KEYS[2], '0')
  -- A wake no client hears (its process died, or its client is not
  -- subscribed) goes on to the next waiter, a few at most per call. A count of
  -- 0 proves it only where subscribers are counted: sharded pub/sub, or a
  -- server outside a Cluster (a Cluster's PUBLISH counts only the subscribers
  -- of the node it runs on). INFO tells them apart; an INFO the server refuses
  -- (an ACL without it) is an error table, which reads as a Cluster. A later
  -- waiter (after a dead one) whose wake channel the ACL refuses is left
  -- registered, to its fallback timer, as a release leaves it.
  for i = 1, 8 do
    local w
    if i == 1 then
      w = redis.call('zpopmin', KEYS[3])
    else
      w = redis.call('zrange', KEYS[3], '0', '0', 'withscores')
      if w[1] and redis.acl_check_cmd then
        local known, allowed = pcall(redis.acl_check_cmd, ARGV[1], KEYS[4] .. ':' .. string.match(w[1], '^[^:]*'), '0')
        if not (known and allowed) then
          return
        end
      end
      if w[1] then
        redis.call('zrem', KEYS[3], w[1])
      end
    end
    if not w[1] then
      return
    end
    if redis.call(ARGV[1], KEYS[4] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1]) > 0 or
        string.lower(ARGV[1]) ~= 'spublish' and
        not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
      return
    end
  end
end
local seen = redis.call('get', KEYS[5])
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[5]) < tonumber(ARGV[3]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
if seen ~= '' then
  -- A repeat of a call that deleted the lock and failed at its publish,
  -- after its writes (a refused SPUBLISH, made again with PUBLISH: again),
  -- wakes the waiters while the lock is still free: they would sleep until
  -- their poll. A repeat after a lost reply wakes nobody: its first attempt
  -- woke a waiter, which may be about to take the lock, and a second one
  -- woken by name would be taken out of the waiter set for nothing.
  if seen == '1' and ARGV[4] == '1' and redis.call('exists', KEYS[1]) == 0 then
    local err = refusal(ARGV[1], {KEYS[2], unpack(wakeChannels(KEYS[3], KEYS[4]))})
    if err then
      return err
    end
    wake()
  end
  return tonumber(seen)
end
-- A name another kind of lock holds is left alone, before anything is
-- written: a read-write lock's hash (its mode field) fails with NOT_MUTEX,
-- a LeanMutex's, Semaphore's or latch's string with HEXISTS's WRONGTYPE.
if redis.call('hexists', KEYS[1], 'mode') == 1 then
  return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
end
if redis.call('exists', KEYS[1]) == 1 then
  -- Checked before the delete: a publish refused after it failed the call
  -- with the lock gone and nobody told.
  local err = refusal(ARGV[1], {KEYS[2], unpack(wakeChannels(KEYS[3], KEYS[4]))})
  if err then
    return err
  end
end
local deleted = redis.call('del', KEYS[1])
redis.call('set', KEYS[5], deleted, 'px', ARGV[2])
if deleted == 0 then
  return 0
end
wake()
return 1
