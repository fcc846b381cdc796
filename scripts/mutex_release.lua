#!lua flags=allow-oom
-- MutexRelease gives up one hold of a reentrant lock. The last hold deletes the
-- lock and publishes Redisson's unlock message "0" on its channel, which wakes
-- Redisson's waiters. Then the longest-registered Go waiter is taken out of
-- the waiter set and woken alone by a message "<score>:<field>" on its own
-- client's wake channel, scriptlock_lock_wake:{name}:<client-id> (the
-- field's part before its first colon): one message reaches one client. A
-- waiter whose client hears nothing (PUBLISH reaches no subscriber: its
-- process died) is dropped and the next one woken, up to eight per release,
-- so dead waiters do not each cost the live ones their fallback period. Go
-- clients do not listen for "0" while a Go owner holds the lock, so a release
-- sends nothing to the other waiting processes. For the same reason the
-- receiver count of "0" no longer says whether a Go waiter is registered:
-- the waiter set is asked on every last release (a ZPOPMIN of a missing key
-- when nobody waits).
-- A retried release whose first reply was lost answers the first outcome:
-- giving up one of several holds records its outcome for latchTTL under a
-- per-call latch key, which every attempt reads: the first one too, which
-- can reach the server after its repeat (it hung on a connection the
-- client then dropped as dead, and the repeat went on a new one), and would
-- otherwise give up a second hold. The last hold records one only when the caller cannot vouch
-- for its hold: with vouched (the caller's hold was live, its lease not run
-- out, when it began releasing) nothing but a release removes the owner, so a
-- retry that finds the owner gone answers "released" without a latch, and the
-- common release writes nothing but the delete and the message.
-- Every write comes before the first publish, the latch too: an attempt can
-- fail at its publish, after its writes (a refused SPUBLISH, made again with
-- PUBLISH: again). A nested release that published latches 10, on which
-- such a repeat publishes again; such a repeat of a release that freed the
-- lock (its latch, or a vouched owner's missing field) publishes "0" and
-- wakes a Go waiter again while the lock is still free, so that the waiters
-- do not sleep until their poll beside a free lock. A repeat after a lost
-- reply (not again) publishes nothing: its first attempt published and woke
-- a waiter, which may be about to take the lock, and a second waiter woken
-- by name would be taken out of the waiter set for a hand-off that is not
-- its own.
-- An owner shared through its context (WithOwner) may lock again under the
-- same field while an earlier release of it is still on its way (its call
-- timed out, and its bytes reach Redis later): its releases name the fencing
-- token of the hold they give up (token, 0 for an owner that is not shared),
-- and a field whose hold was granted since (the counter has moved past that
-- token) is another hold's, which the release leaves alone. A counter that
-- has expired (fenceIdle) drew no token since.
-- Giving up one of several holds sets the lock's expiry to the lease of the
-- holds left; when that brings it forward (the hold given up was a re-entry
-- with a longer lease) it publishes "0" on the channel, and on the channel
-- of the head of Redisson's fair queue, as an Extend to a shorter lease does
-- (MutexExtend): Redisson's waiters were told the longer TTL. The scores
-- of Redisson's fair waiters move earlier by as much, as MutexExtend moves
-- them (none below the head's deadline under the lease left), for a queued
-- waiter that asks again reads its estimate from its score.
-- Reply nil: not held by this owner, nothing changed; 0: still held (one hold
-- fewer); 1: released; 2: released and a Go waiter woken by name, its client
-- listening (a retry answered from a latch says 1 unless it woke one again).
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    latch     redisson_unlock_latch:{name}:<request-id>
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @key    queue     redisson_lock_queue:{name}, Redisson's fair queue
-- @key    timeouts  redisson_lock_timeout:{name}, its waiters' scores
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    latchTTL  duration
-- @arg    retry     bool      true when an earlier attempt may have run
-- @arg    vouched   bool      the caller's hold was live when it began releasing
-- @arg    token     int64     the fencing token of a shared owner's hold, 0 for none
-- @arg    again     bool      a repeat of an attempt that failed at its publish, after its writes: publish as it was to
-- @return int64?
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- wake wakes the longest-registered Go waiter by name, and reports whether
-- its client listens (see below).
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
-- wakeChannels is the wake channel of the first waiter, the one a release
-- wakes first, as MutexReleaseLast checks it; a later one is checked before
-- it is taken out (wake).
local function wakeChannels(waiters, prefix)
  local channels = {}
  for _, w in ipairs(redis.call('zrange', waiters, '0', '0')) do
    channels[#channels + 1] = prefix .. ':' .. string.match(w, '^[^:]*')
  end
  return channels
end
local function wake()
  -- A wake no client hears (its process died, or its client is not
  -- subscribed) goes on to the next waiter, a few at most per call. A count of
  -- 0 proves it only where subscribers are counted: sharded pub/sub, or a
  -- server outside a Cluster (a Cluster's PUBLISH counts only the subscribers
  -- of the node it runs on). INFO tells them apart; an INFO the server refuses
  -- (an ACL without it) is an error table, which reads as a Cluster. A later
  -- waiter (after a dead one) whose wake channel the ACL refuses is left
  -- registered, to its fallback timer, as MutexReleaseLast leaves it: the
  -- lock is already released.
  for i = 1, 8 do
    local w
    if i == 1 then
      w = redis.call('zpopmin', KEYS[4])
    else
      w = redis.call('zrange', KEYS[4], '0', '0', 'withscores')
      if w[1] and redis.acl_check_cmd then
        local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], KEYS[5] .. ':' .. string.match(w[1], '^[^:]*'), '0')
        if not (known and allowed) then
          return false
        end
      end
      if w[1] then
        redis.call('zrem', KEYS[4], w[1])
      end
    end
    if not w[1] then
      return false
    end
    if redis.call(ARGV[3], KEYS[5] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1]) > 0 or
        string.lower(ARGV[3]) ~= 'spublish' and
        not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
      return true
    end
  end
  return false
end
-- rewake tells the waiters again that the lock is free, when it still is:
-- for a repeat of a release that freed it, whose first attempt failed at
-- its publish, after its writes (again). Reply as a release does.
local function rewake()
  if ARGV[8] ~= '1' or redis.call('exists', KEYS[1]) == 1 then
    return 1
  end
  local err = refusal(ARGV[3], {KEYS[2], unpack(wakeChannels(KEYS[4], KEYS[5]))})
  if err then
    return err
  end
  redis.call(ARGV[3], KEYS[2], '0')
  if wake() then
    return 2
  end
  return 1
end
local seen = tonumber(redis.call('get', KEYS[3]))
if seen then
  if seen == 10 then
    -- A nested release that brought the expiry forward and was to publish.
    if ARGV[8] ~= '1' then
      return 0
    end
    local head = redis.call('lindex', KEYS[7], '0')
    local err = refusal(ARGV[3], {KEYS[2], head and KEYS[2] .. ':' .. head or KEYS[2]})
    if err then
      return err
    end
    redis.call(ARGV[3], KEYS[2], '0')
    if head then
      redis.call(ARGV[3], KEYS[2] .. ':' .. head, '0')
    end
    return 0
  end
  if seen > 0 then
    return rewake()
  end
  return seen
end
-- The owner's field with the mode field in one HMGET: in a read-write
-- lock's hash (an RWMutex or Redisson RReadWriteLock holds the name) a
-- reader's field has the form of the owner's, and is no hold of the owner:
-- the lock is left alone, as when the field is missing.
local held = redis.call('hmget', KEYS[1], ARGV[2], 'mode')
local holds = tonumber(held[1])
if held[2] then
  holds = nil
end
if not holds then
  if ARGV[5] == '1' and ARGV[6] == '1' then
    return rewake()
  end
  return nil
end
if ARGV[7] ~= '0' then
  local drawn = redis.call('get', KEYS[6])
  if drawn and drawn ~= ARGV[7] then
    return nil
  end
end
if holds > 1 then
  local before = redis.call('pttl', KEYS[1])
  local head = false
  if before < 0 or tonumber(ARGV[1]) < before then
    -- This release will publish: checked before its writes.
    head = redis.call('lindex', KEYS[7], '0')
    local err = refusal(ARGV[3], {KEYS[2], head and KEYS[2] .. ':' .. head or KEYS[2]})
    if err then
      return err
    end
  end
  redis.call('hincrby', KEYS[1], ARGV[2], '-1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  if before < 0 or tonumber(ARGV[1]) < before then
    -- Every write before the first publish, which can fail (see above).
    redis.call('set', KEYS[3], '10', 'px', ARGV[4])
    if head and before >= 0 then
      -- No score below the head's deadline under the lease left (the
      -- server's now + lease + Redisson's default threadWaitTime, which a
      -- Mutex knows no other of), as for MutexExtend: the scores follow the
      -- expiry a waiter was told when it queued, and one moved past now
      -- would get a live waiter evicted.
      local earlier = before - tonumber(ARGV[1])
      local low = redis.call('zrange', KEYS[8], '0', '0', 'withscores')
      if low[2] then
        local t = redis.call('time')
        local room = tonumber(low[2]) - (t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[1]) + 300000)
        if room < earlier then
          earlier = room
        end
      end
      if earlier > 0 then
        for _, w in ipairs(redis.call('zrange', KEYS[8], '0', '-1')) do
          redis.call('zincrby', KEYS[8], -earlier, w)
        end
      end
    end
    redis.call(ARGV[3], KEYS[2], '0')
    if head then
      redis.call(ARGV[3], KEYS[2] .. ':' .. head, '0')
    end
    return 0
  end
  redis.call('set', KEYS[3], '0', 'px', ARGV[4])
  return 0
end
local err = refusal(ARGV[3], {KEYS[2], unpack(wakeChannels(KEYS[4], KEYS[5]))})
if err then
  return err
end
redis.call('del', KEYS[1])
if ARGV[6] ~= '1' then
  redis.call('set', KEYS[3], '1', 'px', ARGV[4])
end
redis.call(ARGV[3], KEYS[2], '0')
if wake() then
  return 2
end
return 1
