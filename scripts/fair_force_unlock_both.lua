#!lua flags=allow-oom
-- FairForceUnlockBoth deletes a fair lock whoever holds it and tells the head
-- of each fair queue, each by its own protocol, for a name whose waiters may
-- queue by both (a FairMutex's own queue and Redisson's RFairLock queue):
-- Redisson's queue first loses its stale heads (score <= now, the caller's
-- clock), as RFairLock's forceUnlock does, then its first waiter is sent "0"
-- on its own channel; our queue loses the waiters whose deadline passed (the
-- server's clock), as FairRelease evicts them, and its first live waiter is
-- sent "0:<field>" on its client's wake channel; nobody is told when there
-- was no lock. A waiter that died while the lock was held stays first in
-- line until a call finds the lock free, so a force unlock, made when
-- things went wrong, would otherwise tell only a dead waiter.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing (by then
-- the lock may be another owner's, taken after the first attempt freed it).
-- A repeat of a call that deleted the lock tells the waiters again while the
-- lock is still free (see below).
-- The record is reserved first (RecordReserve) for as long as the caller
-- waits: a call reaching the server after that, its caller gone, finds no
-- record, fails with LATE and deletes nothing.
-- Reply true when there was a lock to delete.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @key    rqueue         redisson_lock_queue:{name}
-- @key    rtimeouts      redisson_lock_timeout:{name}
-- @key    channel        redisson_lock__channel:{name}; a Redisson waiter's channel is <channel>:<field>
-- @key    record         redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    recordTTL      duration
-- @arg    slack          duration   how long the reservation may outlast the caller's deadline (the time it took to be reserved)
-- @return bool
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @retryable
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
-- headChannel is the wake channel of the queue's first waiter whose
-- deadline has not passed, the one a release tells (read only: the release
-- evicts the others itself), or nil.
local function headChannel(queue, timeouts, prefix)
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local from = 0
  while true do
    local page = redis.call('lrange', queue, tostring(from), tostring(from + 99))
    for _, entry in ipairs(page) do
      local deadline = redis.call('zscore', timeouts, entry)
      if deadline and tonumber(deadline) > now then
        return prefix .. ':' .. string.match(entry, '^[^:]*')
      end
    end
    if #page < 100 then
      return nil
    end
    from = from + 100
  end
end
-- redissonHeadChannel is the channel of the first waiter of Redisson's
-- queue its eviction keeps (a score past the caller's now goes), or nil.
-- A waiter queued twice loses its score with its first entry, so the
-- eviction keeps its second one, and tells it.
local function redissonHeadChannel(queue, timeouts, now, prefix)
  local dropped = {}
  local from = 0
  while true do
    local page = redis.call('lrange', queue, tostring(from), tostring(from + 99))
    for _, entry in ipairs(page) do
      if dropped[entry] then
        return prefix .. ':' .. entry
      end
      local score = redis.call('zscore', timeouts, entry)
      if score == false or tonumber(score) > tonumber(now) then
        return prefix .. ':' .. entry
      end
      dropped[entry] = true
    end
    if #page < 100 then
      return nil
    end
    from = from + 100
  end
end
local seen = redis.call('get', KEYS[7])
if not seen then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- The reservation was made for as long as the caller still waited when
-- it was sent, so it outlasts the caller's deadline by as long as it took
-- to reach the server, at most slack: with less than that left, the call
-- may be past the deadline.
if seen == '' and redis.call('pttl', KEYS[7]) < tonumber(ARGV[4]) then
  return redis.error_reply('LATE the call reached the server after its reservation ended: its caller gave up waiting, or a failover or restart lost it; nothing changed')
end
-- evictRedisson drops Redisson's stale heads (score <= now, the caller's
-- clock), as RFairLock's forceUnlock does.
local function evictRedisson()
  while true do
    local first = redis.call('lindex', KEYS[4], '0')
    if first == false then
      break
    end
    local score = redis.call('zscore', KEYS[5], first)
    if score == false or tonumber(score) > tonumber(ARGV[1]) then
      break
    end
    redis.call('zrem', KEYS[5], first)
    redis.call('lpop', KEYS[4])
  end
end
-- tellHeads evicts our queue's waiters whose deadline passed and names its
-- first live one, then tells the first of Redisson's queue.
local function tellHeads()
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    while head do
      local deadline = redis.call('zscore', KEYS[8], head)
      if deadline and tonumber(deadline) > now then
        break
      end
      redis.call('lpop', KEYS[2])
      redis.call('zrem', KEYS[8], head)
      head = redis.call('lindex', KEYS[2], '0')
    end
  end
  if head then
    redis.call(ARGV[2], KEYS[3] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
  head = redis.call('lindex', KEYS[4], '0')
  if head then
    redis.call(ARGV[2], KEYS[6] .. ':' .. head, '0')
  end
end
local function refused()
  local channels = {}
  channels[#channels + 1] = headChannel(KEYS[2], KEYS[8], KEYS[3])
  channels[#channels + 1] = redissonHeadChannel(KEYS[4], KEYS[5], ARGV[1], KEYS[6])
  return refusal(ARGV[2], channels)
end
if seen ~= '' then
  -- A repeat of a call that deleted the lock tells the heads again while
  -- the lock is still free: the first attempt may have failed at its
  -- publish, after its writes (a refused SPUBLISH, made again with
  -- PUBLISH), and they would sleep until their next call.
  if seen == '1' and redis.call('exists', KEYS[1]) == 0 then
    local err = refused()
    if err then
      return err
    end
    evictRedisson()
    tellHeads()
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
  -- with the lock gone and the heads not told.
  local err = refused()
  if err then
    return err
  end
end
evictRedisson()
local deleted = redis.call('del', KEYS[1])
redis.call('set', KEYS[7], deleted, 'px', ARGV[3])
if deleted == 0 then
  return 0
end
tellHeads()
return 1
