#!lua flags=allow-oom
-- MutexReleaseLast is MutexRelease for the usual case: the first attempt to
-- give up an owner's last hold, vouched for (the hold was live when the
-- release began). It takes the owner's field out of the lock hash; the hash
-- has no other field, so Redis deletes the key. A count above one (holds left
-- by acquisitions whose replies were lost) goes too: the owner's last Unlock
-- gives up every hold it has. It needs no latch: a retry runs MutexRelease,
-- which reads a vouched owner's missing field as released. One command fewer
-- and five arguments fewer than MutexRelease, on every uncontended Unlock.
-- Wakes as MutexRelease does.
-- Reply nil: not held by this owner, nothing changed; 1: released; 2:
-- released and a Go waiter woken by name, its client listening.
-- @key    lock
-- @key    channel   redisson_lock__channel:{name}
-- @key    waiters   scriptlock_lock_waiters:{name}
-- @key    wake      scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @arg    owner     string
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64?
-- @commands publish spublish
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local freed = 1
redis.call(ARGV[2], KEYS[2], '0')
-- Nobody waits on an uncontended release: EXISTS tells so with an integer,
-- where a ZPOPMIN of the missing set answers an empty array, which costs the
-- server about 0.3 us more per release (a table built for the script).
if redis.call('exists', KEYS[3]) == 0 then
  return freed
end
-- A wake no client hears (its process died, or its client is not
-- subscribed) goes on to the next waiter, a few at most per call. A count of
-- 0 proves it only where subscribers are counted: sharded pub/sub, or a
-- server outside a Cluster (a Cluster's PUBLISH counts only the subscribers
-- of the node it runs on). INFO tells them apart; an INFO the server refuses
-- (an ACL without it) is an error table, which reads as a Cluster.
for _ = 1, 8 do
  local w = redis.call('zpopmin', KEYS[3])
  if not w[1] then
    break
  end
  if redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1]) > 0 or
      string.lower(ARGV[2]) ~= 'spublish' and
      not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
    freed = 2
    break
  end
end
return freed
