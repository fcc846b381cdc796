#!lua flags=allow-oom
-- ForceUnlockConfirmed deletes a lock only while it is still the one an
-- operator confirmed, whoever holds it, and sends the release message its
-- waiters listen for. state is Inspect's state digest of the confirmed
-- reading: the SHA-1 of the name key's type, a hash's mode and every field
-- (sorted; hold counts are left out: a re-entry is the same hold), a string's
-- value, and the fencing counter. Another holder, a holder that let go and
-- took the lock again (a new fencing token), or a key of another kind under
-- the name no longer matches: nothing is deleted and nobody is told.
-- The message is chosen by what is deleted, in the same call: none for a
-- LeanMutex (a string: its waiters poll); for a read-write lock (a hash with
-- a mode) Redisson's "1" after a write lock, "0" after a read lock, on the
-- read-write channel; for a Mutex or FairMutex (a hash without one) what
-- MutexForceUnlock and FairForceUnlockBoth send: "0" on the lock channel and
-- the longest-registered Go waiter woken by name, then, after Redisson's fair
-- queue lost its stale heads (score <= now, the caller's clock) and a
-- FairMutex's queue the waiters whose deadline passed (the server's clock),
-- the head of each fair queue told by its own protocol. A waiter that died
-- while the lock was held stays first in line until a call finds the lock
-- free, and a force unlock is made when something went wrong: telling only
-- that waiter would leave the live ones behind it asleep.
-- The call records its answer under its record key for recordTTL: made
-- again after its reply was lost, or reaching the server after such a
-- retry, it answers as the first attempt did and deletes nothing.
-- Every message the call will send is checked against the caller's ACL
-- (Redis 7's acl_check_cmd) before anything is written: a refused PUBLISH
-- would fail the call after its delete, the lock gone and nobody told. A
-- refused channel fails the call with NO_PUBLISH, naming it (a refused
-- publish command with NO_PUBLISH saying so, naming no channel); a publish
-- command the server lacks (SPUBLISH renamed away) with UNKNOWN_COMMAND.
-- Reply 1: deleted; 0: nothing under the name; -1: the lock changed since it
-- was confirmed, nothing changed.
-- @key    lock
-- @key    fence          redisson_lock_token:{name}
-- @key    channel        redisson_lock__channel:{name}; a Redisson fair waiter's channel is <channel>:<field>
-- @key    waiters        scriptlock_lock_waiters:{name}
-- @key    wake           scriptlock_lock_wake:{name}, the prefix of each client's wake channel
-- @key    rwchannel      redisson_rwlock:{name}
-- @key    fqueue         scriptlock_fair_queue:{name}
-- @key    fwake          scriptlock_fair_wake:{name}; the first waiter's client's channel is <fwake>:<client-id>
-- @key    rqueue         redisson_lock_queue:{name}
-- @key    rtimeouts      redisson_lock_timeout:{name}
-- @key    record         redisson_unlock_latch:{name}:<client-id>:<n>, this call's record
-- @key    ftimeouts      scriptlock_fair_timeout:{name}
-- @arg    state          string     the confirmed reading's state digest (Inspect's)
-- @arg    now            time       the caller's clock, as Redisson's
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    recordTTL      duration
-- @return int64
-- @commands publish spublish
-- @retryable
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
local seen = redis.call('get', KEYS[11])
if seen then
  return tonumber(seen)
end
-- stateOf is Inspect's, word for word.
local function stateOf(lock, fence)
  local t = redis.call('type', lock)['ok']
  local parts = {t}
  if t == 'hash' then
    if redis.call('hlen', lock) > 100000 then
      return ''
    end
    parts[#parts + 1] = redis.call('hget', lock, 'mode') or ''
    local fields = redis.call('hkeys', lock)
    table.sort(fields)
    for _, f in ipairs(fields) do
      parts[#parts + 1] = f
    end
  elseif t == 'string' then
    -- A LeanMutex's owner field, <client-id>:<owner-id> (a UUID first), is
    -- read whole: an owner id has no bound.
    if redis.call('strlen', lock) > 4096 and not string.find(redis.call('getrange', lock, '0', '36'),
        '^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x:') then
      return ''
    end
    parts[#parts + 1] = redis.call('get', lock)
  end
  local ft = redis.call('type', fence)['ok']
  parts[#parts + 1] = ft
  if ft == 'string' then
    parts[#parts + 1] = redis.call('get', fence)
  end
  for i, p in ipairs(parts) do
    parts[i] = #p .. ':' .. p
  end
  return redis.sha1hex(table.concat(parts))
end
local kind = redis.call('type', KEYS[1])['ok']
local answer = 1
if kind == 'none' then
  answer = 0
elseif ARGV[1] == '' or stateOf(KEYS[1], KEYS[2]) ~= ARGV[1] then
  answer = -1
end
-- refused returns the first channel the call would publish on that the ACL
-- refuses, read as the release below picks them, or false; true when the
-- server has no such publish command (acl_check_cmd raises on a command it
-- does not know, as on SPUBLISH renamed away).
local function refused()
  if not redis.acl_check_cmd then
    return false -- before Redis 7.0
  end
  local channels = {}
  -- first is the first entry of a queue that live says is live, in pages.
  local function first(queue, live)
    local from = 0
    while true do
      local page = redis.call('lrange', queue, tostring(from), tostring(from + 99))
      for _, entry in ipairs(page) do
        if live(entry) then
          return entry
        end
      end
      if #page < 100 then
        return false
      end
      from = from + 100
    end
  end
  if kind ~= 'hash' then
    return false -- a LeanMutex: its release sends nothing
  elseif redis.call('hget', KEYS[1], 'mode') then
    channels[1] = KEYS[6]
  else
    channels[1] = KEYS[3]
    for _, w in ipairs(redis.call('zrange', KEYS[4], '0', '7')) do
      channels[#channels + 1] = KEYS[5] .. ':' .. string.match(w, '^[^:]*')
    end
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local head = first(KEYS[7], function(entry)
      local deadline = redis.call('zscore', KEYS[12], entry)
      return deadline and tonumber(deadline) > now
    end)
    if head then
      channels[#channels + 1] = KEYS[8] .. ':' .. string.match(head, '^[^:]*')
    end
    head = first(KEYS[9], function(entry)
      local score = redis.call('zscore', KEYS[10], entry)
      return score == false or tonumber(score) > tonumber(ARGV[2])
    end)
    if head then
      channels[#channels + 1] = KEYS[3] .. ':' .. head
    end
  end
  for _, ch in ipairs(channels) do
    local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], ch, '0')
    if not known then
      return true
    end
    if not allowed then
      if not redis.acl_check_cmd(ARGV[3]) then
        return false, true -- the command itself, whatever the channel
      end
      return ch
    end
  end
  return false
end
local denied, command = false, false
if answer == 1 then
  denied, command = refused()
end
if command then
  return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[3] .. ' command at all (the command is refused, not the channel); nothing changed')
elseif denied == true then
  return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[3] .. ' for the release message; nothing changed')
elseif denied then
  -- The channel holds the lock's name, any bytes: a control byte (a line
  -- break) would cut the reply.
  return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[3] .. ' a message the release sends to channel ' .. (string.gsub(denied, '%c', '?')) .. '; nothing changed')
end
redis.call('set', KEYS[11], answer, 'px', ARGV[4])
if answer ~= 1 then
  return answer
end
local mode = false
if kind == 'hash' then
  mode = redis.call('hget', KEYS[1], 'mode')
end
redis.call('del', KEYS[1])
if kind ~= 'hash' then
  return 1
end
if mode then
  if mode == 'write' then
    redis.call(ARGV[3], KEYS[6], '1')
  else
    redis.call(ARGV[3], KEYS[6], '0')
  end
  return 1
end
redis.call(ARGV[3], KEYS[3], '0')
-- A wake no client hears (its process died, or its client is not
-- subscribed) goes on to the next waiter, a few at most per call. A count of
-- 0 proves it only where subscribers are counted: sharded pub/sub, or a
-- server outside a Cluster (a Cluster's PUBLISH counts only the subscribers
-- of the node it runs on). INFO tells them apart; an INFO the server refuses
-- (an ACL without it) is an error table, which reads as a Cluster.
for _ = 1, 8 do
  local w = redis.call('zpopmin', KEYS[4])
  if not w[1] then
    break
  end
  if redis.call(ARGV[3], KEYS[5] .. ':' .. string.match(w[1], '^[^:]*'), w[2] .. ':' .. w[1]) > 0 or
      string.lower(ARGV[3]) ~= 'spublish' and
      not string.find(tostring(redis.pcall('info', 'cluster')), 'cluster_enabled:0', 1, true) then
    break
  end
end
while true do
  local first = redis.call('lindex', KEYS[9], '0')
  if first == false then
    break
  end
  local score = redis.call('zscore', KEYS[10], first)
  if score == false or tonumber(score) > tonumber(ARGV[2]) then
    break
  end
  redis.call('zrem', KEYS[10], first)
  redis.call('lpop', KEYS[9])
end
local head = redis.call('lindex', KEYS[7], '0')
if head then
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  while head do
    local deadline = redis.call('zscore', KEYS[12], head)
    if deadline and tonumber(deadline) > now then
      break
    end
    redis.call('lpop', KEYS[7])
    redis.call('zrem', KEYS[12], head)
    head = redis.call('lindex', KEYS[7], '0')
  end
end
if head then
  redis.call(ARGV[3], KEYS[8] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
end
head = redis.call('lindex', KEYS[9], '0')
if head then
  redis.call(ARGV[3], KEYS[3] .. ':' .. head, '0')
end
return 1
