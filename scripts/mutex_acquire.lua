#!lua
-- MutexAcquire takes a reentrant lock or re-enters it, in Redisson's layout:
-- the lock is a hash whose only field is the owner (<client-id>:<owner-id>)
-- and whose value is the hold count; the key's PEXPIRE is the lease.
-- A fresh acquisition also draws the next fencing token from the counter.
-- A missing counter starts at the server's TIME in microseconds and expires
-- fenceIdle later; it is not re-armed on every grant (that PEXPIRE would cost
-- a fifth of the grant). A restarted counter is above every token the expired
-- one handed out, as long as that one handed out fewer than one token per
-- microsecond of its life (it grew by one per grant from its own start time),
-- so tokens stay strictly increasing across expiry. A counter below 2^40 was
-- not started here: INCR made it (it was missing), or Redisson's RFencedLock
-- did after it expired (Redisson counts from 1 and sets no expiry). It is
-- lifted by the server's time the same way, or every token from then on,
-- Go's and Java's, would fall below those already handed out.
-- The reply is one integer (a table reply costs Redis more than the whole
-- acquisition): > 0 acquired, the value is the fencing token; 0 re-entered;
-- < 0 held by another owner, -1 - reply is its remaining lease in ms (0: no
-- expiry; at least 1 while one is set; at most 2^42 - 1, about 139 years)
-- (plus 2^42 when the holder is not a scriptlock client, plus 2^43 when a
-- polite caller queued behind other waiters; see below).
-- A refused caller that will wait (waiterTTL > 0) registers in the waiter set,
-- a sorted set of fields scored by the server's clock (ms) at registration, so
-- a release wakes the longest-registered Go waiter alone. A waiter woken by a
-- release was taken out of the set; if it is refused again it passes that
-- wake's score as since and gets its place back. The set expires waiterTTL
-- after the last registration (live waiters call again before that), or
-- later when a waiter with a longer timeout registered: GT never cuts short
-- the expiry another waiter's timeout set, and NX gives a set without one
-- (just created) its first.
-- A registered caller that was not taken out by a wake passes leave: when it
-- gets the lock it leaves the set, which keeps no waiter that stopped waiting.
-- A polite caller does not take a free lock (it may re-enter its own): a
-- release has just woken a waiter, and taking the lock from under it would
-- send that waiter back to wait, which is what makes waits long under
-- contention. When it registers behind other waiters, the reply is lowered
-- by a further 2^43: releases will reach it in turn, so it need not call
-- again soon in case the hand-off was already over.
-- The settings that only some paths read travel in one argument, ctl, since
-- every argument costs the server about as much as a short command: two
-- flag characters, then "<fenceIdle ms>:<waiterTTL ms>:<since>". The flags
-- are 'p' (polite) or '-', then 'l' (leave: on success, take the caller out
-- of the waiter set) or '-'. fenceIdle is how long a new counter lives from its
-- start; waiterTTL the waiter set's expiry, 0 when the caller will not wait
-- (do not register it); since the place to take back (a woken waiter's
-- score), 0 for a new place. The owner comes first, then the lease and ctl,
-- which a Lock with the default settings does not send (the defaults below
-- are its values): Redis 7.0 builds ARGV anew on every call, growing the
-- table one element at a time, and each of them cost the acquisition about
-- 2,000 server instructions (a resize, an interned string, a parsed request
-- argument), where a default here costs none.
-- PTTL both finds a free lock (-2: no key) and, when refused, the lease left.
-- A refused caller's HKEYS finds whether it holds the lock already (a
-- re-entry) and who else does, and fails on a key of another kind (a
-- LeanMutex's string): WRONGTYPE, and nothing changed. A polite caller
-- refused a free lock skips it: there is no key to re-enter or to be of
-- another kind (under contention most refusals are these).
-- A refusal by a holder that is not a scriptlock client says so: the reply is
-- lowered by a further 2^42. A scriptlock client's id is a version-8 UUID
-- (its 15th character '8'), so its fields read "xxxxxxxx-xxxx-8xxx-...:owner";
-- Redisson's are version-4 UUIDs. Such a holder releases with Redisson's "0"
-- alone, so the refused caller listens on Redisson's channel while it waits;
-- releases by scriptlock holders wake Go waiters by name and need no "0".
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @arg    owner     string
-- @arg    opt...    string    the lease in ms, then ctl (flags and settings, see above); a missing one is its default, 30000 and the default Lock's ctl
-- @return int64
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @error  BAD_FENCE  the fencing-token counter holds no integer from 0 to 2^53 - 2: tokens drawn from it could not rise above the last
local lease = ARGV[2] or '30000'
local ctl = ARGV[3] or '--604800000:5000:0'
local ttl = redis.call('pttl', KEYS[1])
-- A polite caller that registered earlier (leave) and is no longer in the
-- set was taken out by a release: the hand-off it would defer to is its own
-- (the wake may have gone out before it listened), so it takes the lock;
-- declining would leave the lock free while every waiter sleeps.
if ttl == -2 and (string.byte(ctl, 1) ~= 112 or
    string.byte(ctl, 2) == 108 and not redis.call('zscore', KEYS[3], ARGV[1])) then
  -- The token first: a counter that holds no integer, a negative one or
  -- one of 2^53 - 1 or more fails the call before anything else is
  -- written. Above 2^53 Lua's numbers (doubles) cannot tell consecutive
  -- integers apart, so tokens would repeat (and 2^63 - 1 would come back
  -- negative), and a negative counter would still be negative once lifted
  -- by the time: the INCR is taken back.
  local token = redis.pcall('incr', KEYS[2])
  if type(token) == 'table' then
    -- Only the counter's value is refused here: another error (an ACL
    -- without INCR) is passed on as Redis gave it.
    local e = token.err
    if not (string.find(e, '^WRONGTYPE') or string.find(e, 'not an integer') or string.find(e, 'overflow')) then
      return redis.error_reply(e)
    end
    return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[2])
  elseif token < 1 or token >= 9007199254740992 then
    redis.call('decr', KEYS[2])
    return redis.error_reply('BAD_FENCE no token can be drawn from ' .. KEYS[2])
  end
  if token < 1099511627776 then
    local t = redis.call('time')
    token = redis.call('incrby', KEYS[2], t[1] .. string.sub('00000' .. t[2], -6))
    redis.call('pexpire', KEYS[2], string.match(ctl, '^..(%d+)'))
  end
  if string.byte(ctl, 2) == 108 then
    redis.call('zrem', KEYS[3], ARGV[1])
  end
  redis.call('hset', KEYS[1], ARGV[1], '1')
  redis.call('pexpire', KEYS[1], lease)
  return token
end
local fields = {}
if ttl ~= -2 then
  fields = redis.call('hkeys', KEYS[1])
end
for i = 1, #fields do
  if fields[i] == 'mode' then
    -- A read-write lock's hash (RWMutex, Redisson RReadWriteLock).
    return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
  end
  if fields[i] == ARGV[1] then
    if string.byte(ctl, 2) == 108 then
      redis.call('zrem', KEYS[3], ARGV[1])
    end
    redis.call('hincrby', KEYS[1], ARGV[1], '1')
    redis.call('pexpire', KEYS[1], lease)
    return 0
  end
end
local free = ttl == -2
if ttl < 0 then
  ttl = 0
elseif ttl == 0 then
  -- Due within the millisecond: 1, as 0 tells of a holder without expiry,
  -- whose waiters sleep a third of the waiter timeout.
  ttl = 1
elseif ttl > 4398046511103 then
  -- A Java holder may set any lease: one past 2^42 - 1 ms (about 139
  -- years) would run into the flags packed above it. Waiting, it is as long.
  ttl = 4398046511103
end
local f = fields[1]
if f and not (string.byte(f, 15) == 56 and string.byte(f, 37) == 58) then
  ttl = ttl + 4398046511104
end
local waiterTTL, since = string.match(ctl, '^..%d+:(%d+):(%d+)$')
if waiterTTL ~= '0' then
  local added
  if since ~= '0' then
    added = redis.call('zadd', KEYS[3], since, ARGV[1])
  else
    local t = redis.call('time')
    added = redis.call('zadd', KEYS[3], 'nx', t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
  end
  -- The expiry calls also tell whether the set was there before this call:
  -- GT moves an expiry the set had; NX sets one only on a set without one,
  -- which is a set just made (every call that makes one gives it one), and
  -- fails on one that has a later or equal expiry (one set in the same ms).
  local existed = redis.call('pexpire', KEYS[3], waiterTTL, 'gt') == 1 or
      redis.call('pexpire', KEYS[3], waiterTTL, 'nx') == 0
  -- Others wait when the set was there and this call added the caller to
  -- it; a caller that was in it already counts them (rare: a polite caller
  -- refused again while still registered).
  if free and existed and (added == 1 or redis.call('zcard', KEYS[3]) > 1) then
    ttl = ttl + 8796093022208
  end
end
return -1 - ttl
