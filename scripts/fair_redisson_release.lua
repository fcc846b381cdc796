#!lua flags=allow-oom
-- FairRedissonRelease gives up one hold of a fair lock queued by Redisson's
-- RFairLock protocol: stale heads (score <= now, the caller's clock) are
-- evicted first, and the last hold deletes the lock and sends Redisson's
-- unlock message "0" to the first waiter on its own channel. When the lock
-- is already gone, the first waiter is told as well (as Redisson does) and
-- nothing else changes. A per-call latch, written before any publish, makes
-- a retried release answer the first outcome (and tell the first waiter
-- again, see below). Giving up one of several holds sets the lock's expiry to
-- the lease of those left; when that brings it forward the first waiter gets
-- "0" too, to read the new TTL: a queued waiter that asks again reads its
-- estimate from its score (Redisson before 3.32.0), so every waiter's score
-- moves earlier by as much as the expiry did (as MutexExtend moves them).
-- A shared owner's release names its hold's fencing token (token, 0 for
-- none) and leaves a newer hold of the same field alone, as MutexRelease.
-- With requeue the release is the undo of an acquisition whose reply was
-- lost while its owner's wait goes on: when it frees the lock and the owner
-- is not queued, the owner goes back first in line (score now + waitTime,
-- as a head's) and every other waiter's score rises by waitTime again (the
-- grant lowered it; the owner's next grant lowers it once more); nobody is
-- told. Waking the next waiter instead would send the owner to the back.
-- Reply {0, 0}: not held by this owner; {1, holds}: still held;
-- {2, receivers}: released, receivers = subscribers that got the message.
-- @key    lock
-- @key    queue          redisson_lock_queue:{name}
-- @key    timeouts       redisson_lock_timeout:{name}
-- @key    channel        redisson_lock__channel:{name}; a waiter's channel is <channel>:<field>
-- @key    latch          redisson_unlock_latch:{name}:<request-id>
-- @key    fence          fencing-token counter (redisson_lock_token:{name})
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    latchTTL       duration
-- @arg    token          int64      the fencing token of a shared owner's hold, 0 for none
-- @arg    requeue        bool       the owner's wait goes on after this undo of a lost grant
-- @arg    waitTime       duration   that wait's waitTime (threadWaitTime, or the tryLock wait); else threadWaitTime, the floor of the scores a nested release moves
-- @return {status int64, value int64}
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- evict drops the stale heads: those whose score has passed.
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
-- kept reads, without writing, what evict does: it returns the first
-- waiter evict keeps (nil: none) and the set of those it drops before it.
-- A waiter queued twice loses its score with its first entry, so evict
-- keeps its second one: taken for stale as well, it made the check pass
-- over the waiter the release tells.
local function kept()
  local dropped = {}
  local from = 0
  while true do
    local page = redis.call('lrange', KEYS[2], tostring(from), tostring(from + 99))
    for _, entry in ipairs(page) do
      if dropped[entry] then
        return entry, dropped
      end
      local score = redis.call('zscore', KEYS[3], entry)
      if score == false or tonumber(score) > tonumber(ARGV[3]) then
        return entry, dropped
      end
      dropped[entry] = true
    end
    if #page < 100 then
      return nil, dropped
    end
    from = from + 100
  end
end
-- headChannel is the channel of the first waiter of the queue evict keeps
-- (read only), or nil.
local function headChannel()
  local head = kept()
  if head then
    return KEYS[4] .. ':' .. head
  end
  return nil
end
local function evict()
  while true do
    local first = redis.call('lindex', KEYS[2], '0')
    if first == false then
      break
    end
    local score = redis.call('zscore', KEYS[3], first)
    if score == false or tonumber(score) > tonumber(ARGV[3]) then
      break
    end
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  end
end
local seen = redis.call('get', KEYS[5])
if seen then
  -- The attempt repeated may have failed at its publish, after its writes
  -- (a refused SPUBLISH, made again with PUBLISH): a repeat of one that
  -- freed the lock tells the first waiter again while the lock is free,
  -- and one of a nested release that told it (latched 11) tells it again.
  -- Heads gone stale since the first attempt are dropped first, as every
  -- call does: a waiter that stopped waiting hears nothing, and the live
  -- one behind it would sleep beside a free lock.
  if seen == '11' or (seen == '2' and redis.call('exists', KEYS[1]) == 0) then
    local err = refusal(ARGV[4], {headChannel()})
    if err then
      return err
    end
    evict()
    local head = redis.call('lindex', KEYS[2], '0')
    if head then
      redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
    end
  end
  if seen == '11' then
    return {1, 0}
  end
  return {tonumber(seen), 0}
end
-- The stale heads are evicted after the check of the message a release
-- sends (refusal), which reads the head they leave (headChannel) without
-- writing: a refused release changes nothing.
if redis.call('exists', KEYS[1]) == 0 then
  local ch = headChannel()
  if ch then
    local err = refusal(ARGV[4], {ch})
    if err then
      return err
    end
  end
  evict()
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
  end
  return {0, 0}
end
-- The owner's field with the mode field in one HMGET: a read-write lock's
-- hash (an RWMutex or Redisson RReadWriteLock holds the name), where a
-- reader's field has the form of the owner's, is not held, and left alone.
local held = redis.call('hmget', KEYS[1], ARGV[2], 'mode')
if not held[1] or held[2] then
  evict()
  return {0, 0}
end
if ARGV[6] ~= '0' then
  local drawn = redis.call('get', KEYS[6])
  if drawn and drawn ~= ARGV[6] then
    evict()
    return {0, 0}
  end
end
-- A release that will tell the queue's head checks its channel before it
-- writes (refusal): the head the eviction leaves, the one told.
local holds = tonumber(held[1]) - 1
if holds > 0 then
  local before = redis.call('pttl', KEYS[1])
  local head = false
  if before < 0 or tonumber(ARGV[1]) < before then
    local ch = headChannel()
    if ch then
      local err = refusal(ARGV[4], {ch})
      if err then
        return err
      end
    end
  end
  evict()
  if before < 0 or tonumber(ARGV[1]) < before then
    head = redis.call('lindex', KEYS[2], '0')
  end
  redis.call('hincrby', KEYS[1], ARGV[2], '-1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  if before < 0 or tonumber(ARGV[1]) < before then
    -- A re-entry with a longer lease given up: the queue's head was told
    -- the longer TTL (as for an Extend to a shorter lease, MutexExtend).
    if head then
      if before >= 0 then
        -- No score below the head's deadline under the lease left (now +
        -- lease + waitTime), as for a re-entry (FairRedissonAcquire): the
        -- scores follow the expiry a waiter was told when it queued, and one
        -- moved past now would get a live waiter evicted.
        local earlier = before - tonumber(ARGV[1])
        local low = redis.call('zrange', KEYS[3], '0', '0', 'withscores')
        if low[2] then
          local room = tonumber(low[2]) - (tonumber(ARGV[3]) + tonumber(ARGV[1]) + tonumber(ARGV[8]))
          if room < earlier then
            earlier = room
          end
        end
        if earlier > 0 then
          for _, w in ipairs(redis.call('zrange', KEYS[3], '0', '-1')) do
            redis.call('zincrby', KEYS[3], -earlier, w)
          end
        end
      end
      -- Latched before the publish, which can fail after the writes: a
      -- repeat that found no latch would give up a second hold.
      redis.call('set', KEYS[5], '11', 'px', ARGV[5])
      redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
      return {1, holds}
    end
  end
  redis.call('set', KEYS[5], '1', 'px', ARGV[5])
  return {1, holds}
end
-- requeue: the owner is not queued once the stale heads are evicted (it is
-- missing, or among them).
local requeue = false
if ARGV[7] == '1' then
  local score = redis.call('zscore', KEYS[3], ARGV[2])
  requeue = score == false
  if not requeue and tonumber(score) <= tonumber(ARGV[3]) then
    local _, dropped = kept()
    requeue = dropped[ARGV[2]] == true
  end
end
if not requeue then
  local ch = headChannel()
  if ch then
    local err = refusal(ARGV[4], {ch})
    if err then
      return err
    end
  end
end
evict()
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], '2', 'px', ARGV[5])
if requeue then
  local waitTime = tonumber(ARGV[8])
  local waiters = redis.call('zrange', KEYS[3], '0', '-1')
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[3], waitTime, waiters[i])
  end
  redis.call('zadd', KEYS[3], tonumber(ARGV[3]) + waitTime, ARGV[2])
  redis.call('lpush', KEYS[2], ARGV[2])
  return {2, 0}
end
local receivers = 0
local head = redis.call('lindex', KEYS[2], '0')
if head then
  receivers = redis.call(ARGV[4], KEYS[4] .. ':' .. head, '0')
end
return {2, receivers}
