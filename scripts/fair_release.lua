#!lua flags=allow-oom
-- FairRelease gives up one hold of a fair lock. The last hold deletes the lock
-- and names the first live waiter only, "0:<field>", on its client's wake
-- channel (<wake>:<client-id>); waiters whose server-time deadline has passed
-- are evicted from the head first. The outcome is remembered under a per-call
-- latch key, so a retried release whose first reply was lost answers the same;
-- every attempt reads it, the first one too, which can reach the server after
-- its repeat (see MutexRelease). The
-- last hold records one only when the caller cannot vouch for its hold: with
-- vouched (the hold was live, its lease not run out, when the release began)
-- nothing but a release removes the owner, so a retry that finds the owner
-- gone answers "released" without a latch, as MutexRelease does. A repeat
-- that answers "released" names the first live waiter again while the lock
-- is free (see below). With nobody
-- queued, the release reads neither the server's clock nor the waiters'
-- deadlines.
-- A shared owner's release names its hold's fencing token (token, 0 for
-- none) and leaves a newer hold of the same field alone, as MutexRelease.
-- With requeue (> 0) the release is the undo of an acquisition whose reply
-- was lost while its owner's wait goes on: only the first in line is
-- granted the lock, so when the release frees it and the owner is not
-- queued, the owner is put back first in line (deadline now + requeue)
-- and nobody is woken; its next call takes the lock. Waking the next
-- waiter instead would send the owner to the back of the queue.
-- Wherever it wakes the first waiter, it also sends Redisson's "0" to the
-- first two threads of Redisson's RFairLock queue on the name, if any, each
-- on its own channel: such a thread of Redisson before 3.32.0 that asked
-- again after this hold outlasted the TTL it was told waits for that message
-- alone (its reply turned negative), and would wait beside a free lock. The
-- second in case the first is gone: a thread told asks again, and its
-- acquisition evicts the heads whose score passed, as Redisson's own.
-- Reply 0: not held by this owner, nothing changed; 1: still held (one hold
-- fewer); 2: released.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @key    latch          redisson_unlock_latch:{name}:<request-id>
-- @key    fence          fencing-token counter (redisson_lock_token:{name})
-- @key    javaQueue      redisson_lock_queue:{name}
-- @key    javaChannel    redisson_lock__channel:{name}; a queued thread's channel is <javaChannel>:<thread>
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    latchTTL       duration
-- @arg    retry          bool       true when an earlier attempt may have run
-- @arg    vouched        bool       the caller's hold was live when it began releasing
-- @arg    token          int64      the fencing token of a shared owner's hold, 0 for none
-- @arg    requeue        duration   the owner's waiter timeout when its wait goes on, 0 for none
-- @return int64
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- wakeHead evicts the waiters whose deadline passed from the head of the
-- queue and names the first live one.
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
-- javaThreads are Redisson's first two queued threads (read only).
local function javaThreads()
  if redis.call('lindex', KEYS[7], '0') then
    return redis.call('lrange', KEYS[7], '0', '1')
  end
  return {}
end
local function wakeHead()
  for _, thread in ipairs(javaThreads()) do
    redis.call(ARGV[3], KEYS[8] .. ':' .. thread, '0')
  end
  local head = redis.call('lindex', KEYS[2], '0')
  if not head then
    return
  end
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  while head do
    local deadline = redis.call('zscore', KEYS[3], head)
    if deadline and tonumber(deadline) > now then
      break
    end
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], head)
    head = redis.call('lindex', KEYS[2], '0')
  end
  if head then
    redis.call(ARGV[3], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
end
-- A repeat that answers "released" names the first live waiter again while
-- the lock is free: the attempt it repeats may have failed at its publish,
-- after its writes (a refused SPUBLISH, made again with PUBLISH). A name
-- told twice costs that waiter one call.
local function refused()
  local channels = {}
  for _, thread in ipairs(javaThreads()) do
    channels[#channels + 1] = KEYS[8] .. ':' .. thread
  end
  local own = headChannel(KEYS[2], KEYS[3], KEYS[4])
  if own then
    channels[#channels + 1] = own
  end
  return refusal(ARGV[3], channels)
end
local seen = redis.call('get', KEYS[5])
if seen then
  if seen == '2' and redis.call('exists', KEYS[1]) == 0 then
    local err = refused()
    if err then
      return err
    end
    wakeHead()
  end
  return tonumber(seen)
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
    if redis.call('exists', KEYS[1]) == 0 then
      local err = refused()
      if err then
        return err
      end
      wakeHead()
    end
    return 2
  end
  return 0
end
if ARGV[7] ~= '0' then
  local drawn = redis.call('get', KEYS[6])
  if drawn and drawn ~= ARGV[7] then
    return 0
  end
end
if holds > 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], '-1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[5], '1', 'px', ARGV[4])
  return 1
end
-- Checked before the delete: a publish refused after it failed the call
-- with the lock gone and the head not told.
local err = refused()
if err then
  return err
end
redis.call('del', KEYS[1])
if ARGV[8] ~= '0' then
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if redis.call('zadd', KEYS[3], now + tonumber(ARGV[8]), ARGV[2]) == 1 then
    redis.call('lpush', KEYS[2], ARGV[2])
    -- As FairAcquire queues: the keys outlive the owner's deadline.
    if redis.call('pexpire', KEYS[2], ARGV[8], 'gt') == 0 then
      redis.call('pexpire', KEYS[2], ARGV[8], 'nx')
    end
    if redis.call('pexpire', KEYS[3], ARGV[8], 'gt') == 0 then
      redis.call('pexpire', KEYS[3], ARGV[8], 'nx')
    end
    if ARGV[6] ~= '1' then
      redis.call('set', KEYS[5], '2', 'px', ARGV[4])
    end
    -- Redisson's threads are told all the same: they are not in our
    -- line, and one that waits for a message alone would sleep beside a
    -- free lock should the owner then give up.
    for _, thread in ipairs(javaThreads()) do
      redis.call(ARGV[3], KEYS[8] .. ':' .. thread, '0')
    end
    return 2
  end
end
-- Latched before the publish, which can fail after the writes.
if ARGV[6] ~= '1' then
  redis.call('set', KEYS[5], '2', 'px', ARGV[4])
end
wakeHead()
return 2
