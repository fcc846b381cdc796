#!lua
-- FairAcquire takes a fair (FIFO) reentrant lock, re-enters it, or queues the
-- caller. The lock hash is Mutex's (field <client-id>:<owner-id> -> holds); the
-- queue list holds waiters in arrival order and the timeouts zset holds each
-- waiter's liveness deadline in server milliseconds (redis.call('TIME'), never a
-- client clock, so a skewed client cannot evict live waiters).
-- The lock is granted only when it is free and the queue is empty or the caller
-- is its head: a newcomer never overtakes a queued waiter. Waiters whose
-- deadline has passed are evicted from the head only, each once, so a call
-- costs O(log n) amortised (a caller at the head is not: it is calling).
-- Only a call that finds the lock free evicts: while it is held, a dead head
-- costs nobody a turn, and the release evicts before it wakes the next
-- waiter, so a refusal under contention reads no deadline. When an eviction
-- leaves the lock free, the new head
-- is told by name, "0:<field>", on its client's wake channel
-- (<wake>:<client-id>, the field's part before its first colon): one message
-- to one process, on a channel a client keeps open while it waits often.
-- A queued head granted the lock with a lease shorter than a third of the
-- waiter timeout tells the next waiter the same way, so that it learns the
-- new holder's lease (see below).
-- A queued caller refreshes its deadline to now + waiterTimeout on every call,
-- and the queue keys expire no sooner than that deadline.
-- The reply is one integer (a table reply costs Redis and the client more
-- than the work saved): > 0 acquired, the value is the fencing token; 0
-- re-entered; < 0 not acquired, -1 - reply = 4 * ttl + 2 * foreign + head, where ttl is the
-- lock's remaining lease in ms (0 when free but others are ahead, or held
-- without expiry; at least 1 while an expiry is set; at most 2^51 - 1), head is 1 when the caller is first in the queue,
-- and foreign is 1 when the caller is first and the holder is not a
-- scriptlock client (a field that is not "<version-8 UUID>:owner", as
-- MutexAcquire tells it): a Redisson RLock holder releases with Redisson's
-- "0" on the lock's channel alone, which the head then listens for too.
-- A held lock whose hash has a mode field is a read-write lock's (an RWMutex
-- or Redisson RReadWriteLock holds the name): the call fails with NOT_MUTEX
-- and changes nothing. The re-entry check reads that field with the
-- caller's own (HMGET), so a refusal costs no further command.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    fence          redisson_lock_token:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- The settings that only the rarer paths read travel in one argument, ctl,
-- as MutexAcquire's do (every argument costs the server about 0.09 us, and an
-- uncontended call reads none of them): two flag characters, then
-- "<waiterTimeout ms>:<fenceIdle ms>". The flags are 'e' (enqueue: queue the
-- caller when the lock cannot be taken now) or '-', then 'r' (rewake: a
-- repeat after a refused SPUBLISH, which tells the head of a free lock, as
-- the first attempt may have evicted and failed at its publish) or '-'.
-- waiterTimeout is how long a queued waiter stays queued without calling
-- again; fenceIdle how long a token counter lives from its start (see
-- MutexAcquire).
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    ctl            string     flags and settings, see above (the usual values are formatted once per Client)
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return int64
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @error  BAD_FENCE  the fencing-token counter holds no integer from 0 to 2^53 - 2: tokens drawn from it could not rise above the last
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @commands publish spublish

-- The server's clock is read only when it is needed (a queue to check, a
-- waiter to queue, a counter to start): an uncontended call costs no TIME.
local t, now
local function clock()
  if not now then
    t = redis.call('time')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end
-- ctl's numbers are read on the paths that need them: an uncontended call
-- parses none.
local ctl = ARGV[3]
local evicted = false
local head = false
-- One EXISTS answers the uncontended case: no lock and nobody queued.
local n = redis.call('exists', KEYS[1], KEYS[2])
local free = n == 0
if not free then
  head = redis.call('lindex', KEYS[2], '0')
  -- A list exists only while it has members, so with a head the count says
  -- whether the lock exists too (evictions do not touch the lock).
  free = head ~= false and n == 1
  -- The caller is alive (it is calling): its own place is not checked.
  -- The dead heads are counted first and evicted after, so that a message
  -- to the new head the ACL user may not publish is refused before any
  -- write.
  -- The heads after the first are read in batches (LRANGE) that double
  -- from one to 512: a LINDEX per head walks the list from its end each
  -- time, k dead heads costing k²/2 steps, and one dead head (the usual
  -- case) still costs one read of one element.
  local dead = 0
  local batch, i, size = {}, 0, 1
  while free and head and head ~= ARGV[2] do
    local deadline = redis.call('zscore', KEYS[3], head)
    if deadline and tonumber(deadline) > clock() then
      break
    end
    dead = dead + 1
    i = i + 1
    if i > #batch then
      batch = redis.call('lrange', KEYS[2], dead, dead + size - 1)
      i = 1
      if size < 512 then
        size = size * 2
      end
    end
    head = batch[i] or false
  end
  if dead > 0 then
    -- A live head other than the caller is told below: checked here,
    -- inline (only a call that evicts pays for it), as a publish refused
    -- after the evictions failed the call with them made and the head not
    -- told. NO_PUBLISH says whether the ACL user may not run the publish
    -- command at all or may not publish to the channel (named, control
    -- bytes masked); UNKNOWN_COMMAND: no such command (SPUBLISH renamed
    -- away), which the Client makes again with PUBLISH. Skipped on a
    -- server before 7.0 (no acl_check_cmd).
    if head and head ~= ARGV[2] and redis.acl_check_cmd then
      local ch = KEYS[5] .. ':' .. string.match(head, '^[^:]*')
      local known, allowed = pcall(redis.acl_check_cmd, ARGV[4], ch, '0')
      if not known then
        return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[4] .. ' for the message to the head; nothing changed')
      end
      if not allowed then
        if not redis.acl_check_cmd(ARGV[4]) then
          return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[4] .. ' command at all (the command is refused, not the channel); nothing changed')
        end
        return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[4] .. ' the message to the head to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
      end
    end
    for _ = 1, dead do
      redis.call('zrem', KEYS[3], redis.call('lpop', KEYS[2]))
    end
    evicted = true
  end
end
if free and (head == false or head == ARGV[2]) then
  -- The token first: a counter that holds no integer, a negative one or
  -- one of 2^53 - 1 or more fails the call before the grant is written.
  -- Above 2^53 Lua's numbers (doubles) cannot tell consecutive integers
  -- apart, so tokens would repeat (and 2^63 - 1 would come back negative),
  -- and a negative counter would still be negative once lifted by the
  -- time: the INCR is taken back.
  local token = redis.pcall('incr', KEYS[4])
  if type(token) == 'table' then
    -- Only the counter's value is refused here: another error (an ACL
    -- without INCR) is passed on as Redis gave it.
    local e = token.err
    if not (string.find(e, '^WRONGTYPE') or string.find(e, 'not an integer') or string.find(e, 'overflow')) then
      return redis.error_reply(e)
    end
    return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[4])
  elseif token < 1 or token >= 9007199254740992 then
    redis.call('decr', KEYS[4])
    return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[4])
  end
  if token < 1099511627776 then
    clock()
    token = redis.call('incrby', KEYS[4], t[1] .. string.sub('00000' .. t[2], -6))
    redis.call('pexpire', KEYS[4], string.match(ctl, ':(%d+)$'))
  end
  if head == ARGV[2] then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], ARGV[2])
    -- The next waiter is now first in line, asleep for a third of its
    -- timeout: first in line, it would sleep no longer than the holder's
    -- lease, in case the holder dies. When this lease is shorter, it is
    -- told to ask again and learn it. Best effort (pcall): the lock is
    -- granted already, and a refused SPUBLISH must not fail the grant. A
    -- refused SPUBLISH (a Cluster without sharded pub/sub, its waiters
    -- listening plainly) is sent again with PUBLISH, as the Client would
    -- make the call again: the call is not made again, and the next waiter
    -- would sleep that third beside a lock whose lease ended long before.
    if tonumber(ARGV[1]) * 3 < tonumber(string.match(ctl, '^..(%d+)')) then
      local second = redis.call('lindex', KEYS[2], '0')
      if second then
        local channel = KEYS[5] .. ':' .. string.match(second, '^[^:]*')
        if type(redis.pcall(ARGV[4], channel, '0:' .. second)) == 'table' and string.lower(ARGV[4]) == 'spublish' then
          redis.pcall('publish', channel, '0:' .. second)
        end
      end
    end
  end
  redis.call('hset', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return token
end
-- A free lock has no holder to re-enter, and is of no other kind. Nothing
-- has been written on this path: evictions happen only on a free lock.
if not free then
  local held = redis.call('hmget', KEYS[1], ARGV[2], 'mode')
  if held[2] then
    return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
  end
  if held[1] then
    redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return 0
  end
end
-- A repeat (rewake) evicts nothing: the attempt it repeats did, and its
-- message to the head was refused after the evictions.
if free and (evicted or string.byte(ctl, 2) == 114) then
  redis.call(ARGV[4], KEYS[5] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
end
if string.byte(ctl, 1) == 101 then
  local waiterTimeout = string.match(ctl, '^..(%d+)')
  if redis.call('zadd', KEYS[3], clock() + tonumber(waiterTimeout), ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
    if head == false then
      head = ARGV[2]
    end
  end
  -- Every live waiter calls again within its timeout, so the queue outlives
  -- its last live waiter by at most the longest timeout: a queue whose
  -- waiters all died (a crashed process, a failover) expires on its own.
  -- GT never shortens a longer expiry another waiter's timeout set, and
  -- costs one command per key; it leaves a key without expiry (just
  -- created) alone, which NX then gives one.
  if redis.call('pexpire', KEYS[2], waiterTimeout, 'gt') == 0 then
    redis.call('pexpire', KEYS[2], waiterTimeout, 'nx')
  end
  if redis.call('pexpire', KEYS[3], waiterTimeout, 'gt') == 0 then
    redis.call('pexpire', KEYS[3], waiterTimeout, 'nx')
  end
end
local first = 0
if head == ARGV[2] then
  first = 1
end
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  ttl = 0
elseif ttl == 0 then
  -- Due within the millisecond: 1, as 0 tells of no expiry, after which
  -- the head sleeps a third of the waiter timeout.
  ttl = 1
elseif ttl > 2251799813685247 then
  -- A Java holder may set any lease: past 2^51 - 1 ms (about 71,000
  -- years) the reply would run past the integers Lua's doubles hold, and
  -- rounding would set the flags below it. Waiting, it is as long.
  ttl = 2251799813685247
end
-- Only the head can take the lock next: only its refusal reads the holder
-- (whatever its lease: a holder without expiry releases with a message too;
-- a head is refused only while the lock is held).
local foreign = 0
if first == 1 then
  local f = redis.call('hkeys', KEYS[1])[1]
  if f and not (string.byte(f, 15) == 56 and string.byte(f, 37) == 58) then
    foreign = 2
  end
end
return -1 - (4 * ttl + foreign + first)
