#!lua flags=allow-oom
-- MutexReleaseLast is MutexRelease for the usual case: the first attempt to
-- give up an owner's last hold, vouched for (the hold was live when the
-- release began). It takes the owner's field out of the lock hash; the hash
-- has no other field, so Redis deletes the key. A count above one (holds left
-- by acquisitions whose replies were lost) goes too: the owner's last Unlock
-- gives up every hold it has. It needs no latch: a retry runs MutexRelease,
-- which reads a vouched owner's missing field as released. One command, four
-- keys and seven arguments fewer than MutexRelease (six with SPUBLISH), on
-- every uncontended Unlock.
-- Wakes as MutexRelease does.
-- Reply nil: not held by this owner, nothing changed; 1: released; 2:
-- released and a Go waiter woken by name, its client listening.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @arg    owner     string
-- @arg    opt...    string    the publish command: "spublish" for sharded channels; missing (or any other): "publish"
-- @return int64?
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- The publish command is sent only when it is SPUBLISH: a missing argument
-- is PUBLISH, which spares the server an argument on every usual release
-- (Redis 7.0 builds ARGV anew on every call, about 2,000 server instructions
-- an element). Each call names its command as a literal, in both branches.
-- Nobody waits on an uncontended release: PTTL (-2) tells so with an integer,
-- where a ZPOPMIN of the missing set answers an empty array, which costs the
-- server about 0.3 us more per release (a table built for the script). It
-- comes first, before anything is written.
-- An uncontended release sends its message before the HDEL, through
-- redis.pcall: one the ACL refuses (a user without the channel: Redis 7
-- gives a new user none) fails the call with nothing written, where it
-- failed it after the HDEL, the lock gone and nobody told. Nobody hears a
-- message before the script ends, so its place among the writes is not
-- seen; only a release of an owner that no longer holds (its lock
-- force-unlocked) sends it with nothing deleted, which costs the waiters
-- one more look. A contended one checks its messages first (acl_check_cmd),
-- as the other releases do: on every call that check cost this script
-- about 0.55 us (INFO commandstats medians of 3.03 us against 2.47), and a
-- local function (a closure made on every call) 0.1 to 0.2 us, which is
-- why the check is written out here; the pcall costs about what the
-- redis.call did.
-- A contended release takes the first waiter out of the set (ZPOPMIN) before
-- it writes anything else, and checks only the channels it is about to
-- publish on: the lock's and that waiter's wake channel. A refused one puts
-- the waiter back, with its score and the set's expiry (the pop of the last
-- one deletes the set; PTTL, in place of EXISTS, read it for that), so a
-- refused release changes nothing. The expiry put back is the one read,
-- counted from the put-back (Redis 7.0's clock moves within a script): the
-- set lives the few microseconds between them longer.
-- The Client sends 'spublish' as written: compared first as it is, since
-- string.lower on every sharded release cost more than the argument saved.
local sharded = ARGV[2] == 'spublish' or ARGV[2] ~= nil and string.lower(ARGV[2]) == 'spublish'
local publish = sharded and 'spublish' or 'publish'
local wttl = redis.call('pttl', KEYS[3])
local waiting = wttl ~= -2
local sent = 0
local w, putBack
if waiting then
  w = redis.call('zpopmin', KEYS[3])
  -- putBack undoes a pop: for a refused release, or a waiter after a dead
  -- one whose wake channel is refused.
  -- A set due within the millisecond (PTTL 0) gets 1 ms: made again by
  -- the ZADD, without one it would never expire.
  putBack = function(p)
    redis.call('zadd', KEYS[3], p[2], p[1])
    if wttl >= 0 then
      redis.call('pexpire', KEYS[3], math.max(wttl, 1))
    end
  end
else
  if sharded then
    sent = redis.pcall('spublish', KEYS[2], '0')
  else
    sent = redis.pcall('publish', KEYS[2], '0')
  end
end
if waiting or type(sent) == 'table' then
  if not waiting and redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return nil
  end
  if redis.acl_check_cmd then
    -- The lock channel, and the wake channel of the waiter the release
    -- wakes first. acl_check_cmd raises on a command the server lacks
    -- (SPUBLISH renamed away): the Client makes the call again with PUBLISH.
    -- A channel is any bytes: a control byte would cut the reply.
    local channels = {KEYS[2]}
    if waiting and w[1] then
      channels[2] = KEYS[4] .. ':' .. string.match(w[1], '^[^:]*')
    end
    for _, ch in ipairs(channels) do
      local known, allowed = pcall(redis.acl_check_cmd, publish, ch, '0')
      if waiting and not (known and allowed) then
        if w[1] then
          putBack(w)
        end
        if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
          -- An owner that does not hold the lock sends nothing: not held,
          -- as MutexRelease (the retry) and the uncontended path answer.
          return nil
        end
      end
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
  end
  if not waiting then
    return sent -- refused otherwise (before Redis 7.0): as Redis answered
  end
end
-- HDEL fails on a key of another type (the name taken by another kind of
-- lock, this one's hash deleted elsewhere): through pcall, so that the
-- waiter taken out is put back before the error goes back, as a Lua error
-- keeps the writes made before it.
local gone = redis.pcall('hdel', KEYS[1], ARGV[1])
if gone ~= 1 then
  if waiting and w[1] then
    putBack(w)
  end
  if type(gone) == 'table' then
    return gone
  end
  return nil
end
local freed = 1
if not waiting then
  return freed
end
if sharded then
  redis.call('spublish', KEYS[2], '0')
else
  redis.call('publish', KEYS[2], '0')
end
-- A wake no client hears (its process died, or its client is not
-- subscribed) goes on to the next waiter, a few at most per call. A count of
-- 0 proves it only where subscribers are counted: sharded pub/sub, or a
-- server outside a Cluster (a Cluster's PUBLISH counts only the subscribers
-- of the node it runs on). INFO tells them apart; an INFO the server refuses
-- (an ACL without it) is an error table, which reads as a Cluster. A later
-- waiter's wake channel is checked before its publish: one the ACL refuses
-- is put back and left to its fallback timer, the lock already released.
for i = 1, 8 do
  if i > 1 then
    w = redis.call('zpopmin', KEYS[3])
  end
  if not w[1] then
    break
  end
  local ch = KEYS[4] .. ':' .. string.match(w[1], '^[^:]*')
  if i > 1 and redis.acl_check_cmd then
    local known, allowed = pcall(redis.acl_check_cmd, publish, ch, '0')
    if not (known and allowed) then
      putBack(w)
      break
    end
  end
  local heard
  if sharded then
    heard = redis.call('spublish', ch, w[2] .. ':' .. w[1])
  else
    heard = redis.call('publish', ch, w[2] .. ':' .. w[1])
  end
  if heard > 0 or not sharded and
      not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
    freed = 2
    break
  end
end
return freed
