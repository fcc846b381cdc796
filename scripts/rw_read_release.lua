#!lua flags=allow-oom
-- RwReadRelease gives up one read hold: it decrements the owner's field and
-- deletes that hold's lease key. While other holds remain in read mode, the
-- hash's expiry shrinks to the longest remaining read-hold lease (as Redisson
-- does; O(read holds)); when none remains, the lock is deleted and "0"
-- (unlocked) is published. In write mode the expiry is the write hold's lease,
-- which has no lease key of its own: the caller passes what is left of it
-- (writeLeft, from its write hold's loss deadline; 0 when it has none), and
-- the expiry becomes the longer of that and the longest read lease left. A
-- nested read hold's acquisition raised it to its own lease; without this,
-- a write hold with a short explicit lease kept the lock for that read
-- lease (the watchdog's, 30 s) after the hold had ended. With writeLeft 0 a
-- read release only lengthens it (Redisson shortens it to the reads' leases
-- there too, which lets the lock expire under a live writer). A release that brings the expiry forward
-- publishes "1" (Redisson publishes nothing): waiters were told the old
-- remaining lease and would sleep past the new expiry, and a reader left
-- whose holder died or is a Redisson client (no scriptlock Client ends it
-- at its lease) frees the lock then with no message. A per-call latch makes a retried release answer the first outcome;
-- the repeat of a release that brought the expiry forward publishes "1"
-- again while readers can enter (the lock free or held for reading,
-- whatever kind of lock took the name since), and that of one that deleted the
-- lock "0" while it is still free:
-- the first attempt may have failed at its publish, after its writes (a
-- refused SPUBLISH, made again with PUBLISH).
-- Reply {0, 0}: not held by this owner; {1, left}: this owner still reads,
-- and left is the longest remaining lease (ms) of its own read holds, which
-- the lock outlives (-1 when none of them has one left; 0 from a retry that
-- only read the latch); {2, 0}: this owner's last read hold is gone; {3, 0}:
-- not held either, the hold's lease had run out (none of the owner's lease
-- keys was left) while other readers kept the lock, and its field, which
-- Redisson's layout keeps until then, is given up as a release would.
-- @key    lock
-- @key    channel        redisson_rwlock:{name}
-- @key    timeouts       {name}:<owner>:rwlock_timeout
-- @key    prefix         {name}, the prefix of every owner's lease keys
-- @key    latch          redisson_unlock_latch:{name}:<request-id>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    latchTTL       duration
-- @arg    nonce          int64      the hold's mark (RwReadAcquire), 0: no check; a first lease key marked otherwise (not 1) is a newer hold of the owner: not held
-- @arg    writeLeft      duration   in write mode, what is left of the owner's write hold's lease; 0: unknown, the expiry is only lengthened
-- @return {status int64, value int64}
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
local seen = tonumber(redis.call('get', KEYS[5]))
if seen then
  if seen > 20 then
    -- Only while the lock is free: a waiter the first attempt woke may
    -- hold it by now.
    if redis.call('exists', KEYS[1]) == 0 then
      -- Checked before it publishes, as a release is (below).
      if redis.acl_check_cmd then
        local known, allowed = pcall(redis.acl_check_cmd, ARGV[2], KEYS[2], '0')
        if not known then
          return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[2] .. ' for the release message; nothing changed')
        end
        if not allowed then
          if not redis.acl_check_cmd(ARGV[2]) then
            return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[2] .. ' command at all (the command is refused, not the channel); nothing changed')
          end
          return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[2] .. ' the release message to channel ' .. (string.gsub(KEYS[2], '%c', '?')) .. ' (the channel is refused); nothing changed')
        end
      end
      redis.call(ARGV[2], KEYS[2], '0')
    end
    seen = seen - 20
  elseif seen > 10 then
    -- Only while readers can enter (the lock free or held for reading):
    -- a writer may have taken it since the first attempt, or, the lock
    -- freed, another kind of lock (a string, or a hash without a mode),
    -- whose key HGET would refuse (WRONGTYPE): read with PCALL.
    local mode = redis.pcall('hget', KEYS[1], 'mode')
    if mode == 'read' or (mode == false and redis.call('exists', KEYS[1]) == 0) then
      -- Checked before it publishes, as a release is (below).
      if redis.acl_check_cmd then
        local known, allowed = pcall(redis.acl_check_cmd, ARGV[2], KEYS[2], '0')
        if not known then
          return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[2] .. ' for the release message; nothing changed')
        end
        if not allowed then
          if not redis.acl_check_cmd(ARGV[2]) then
            return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[2] .. ' command at all (the command is refused, not the channel); nothing changed')
          end
          return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[2] .. ' the release message to channel ' .. (string.gsub(KEYS[2], '%c', '?')) .. ' (the channel is refused); nothing changed')
        end
      end
      redis.call(ARGV[2], KEYS[2], '1')
    end
    seen = seen - 10
  end
  return {seen, 0}
end
-- A hash without a mode is another kind of lock (a Mutex's, FairMutex's or
-- Redisson RLock's), whose owner fields have the form of a reader's: not
-- held, left alone. The mode is read first, so this costs no command.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return {0, 0}
end
if ARGV[4] ~= '0' then
  local mark = redis.call('get', KEYS[3] .. ':1')
  if mark and mark ~= '1' and mark ~= ARGV[4] then
    return {0, 0}
  end
end
-- Every release that may publish is checked first: checking only the ones
-- that will would read the other holds twice.
-- The release message checked before any write (Redis 7's acl_check_cmd),
-- written out: a local function's closure is made on every call, which
-- costs a release 0.1 to 0.2 us. Refused: NO_PUBLISH, saying whether the
-- command or the channel (named: any bytes, a control byte would cut the
-- reply) is refused, nothing changed; a command the server lacks (SPUBLISH
-- renamed away) UNKNOWN_COMMAND, which the Client makes again with PUBLISH.
if redis.acl_check_cmd then
  local known, allowed = pcall(redis.acl_check_cmd, ARGV[2], KEYS[2], '0')
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[2] .. ' for the release message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(ARGV[2]) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[2] .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[2] .. ' the release message to channel ' .. (string.gsub(KEYS[2], '%c', '?')) .. ' (the channel is refused); nothing changed')
  end
end
-- ended: none of the owner's read holds has its lease key left. Their
-- fields outlive the keys while other readers keep the lock, so the owner
-- seems to read: the hold is given up all the same (a field left behind
-- would come back to life with the owner's next hold, whose renewal makes
-- every lease key again), but the answer is 3, not held.
local ended = true
for i = 1, tonumber(redis.call('hget', KEYS[1], ARGV[1])) or 0 do
  if redis.call('exists', KEYS[3] .. ':' .. i) == 1 then
    ended = false
    break
  end
end
local holds = redis.call('hincrby', KEYS[1], ARGV[1], '-1')
redis.call('del', KEYS[3] .. ':' .. (holds + 1))
local status = 1
if holds <= 0 then
  redis.call('hdel', KEYS[1], ARGV[1])
  status = 2
end
-- answer is what the caller is told (and a repeat, through the latch).
local answer = status
if ended then
  answer = 3
end
if redis.call('hlen', KEYS[1]) > 1 then
  local longest, own = -3, -1
  local fields = redis.call('hkeys', KEYS[1])
  for _, field in ipairs(fields) do
    local n = tonumber(redis.call('hget', KEYS[1], field))
    if n then
      for i = n, 1, -1 do
        local ttl = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        if ttl > longest then
          longest = ttl
        end
        if field == ARGV[1] and ttl > own then
          own = ttl
        end
      end
    end
  end
  if longest > 0 or mode == 'write' then
    local sooner = false
    local write = tonumber(ARGV[5])
    if mode == 'write' and write > 0 then
      -- The write lease left, or the longest read lease if longer.
      local expiry = math.max(write, longest)
      sooner = expiry < redis.call('pttl', KEYS[1])
      redis.call('pexpire', KEYS[1], expiry)
    elseif longest > 0 and (mode ~= 'write' or longest > redis.call('pttl', KEYS[1])) then
      sooner = mode ~= 'write' and longest < redis.call('pttl', KEYS[1])
      redis.call('pexpire', KEYS[1], longest)
    end
    if sooner then
      -- Latched first (status + 10: a repeat publishes again), as the
      -- publish may fail after the writes.
      redis.call('set', KEYS[5], answer + 10, 'px', ARGV[3])
      redis.call(ARGV[2], KEYS[2], '1')
    else
      redis.call('set', KEYS[5], answer, 'px', ARGV[3])
    end
    if answer ~= 1 then
      return {answer, 0}
    end
    return {1, own}
  end
end
-- No lease left on the lock: the owner's last read hold goes with it.
if not ended then
  answer = 2
end
redis.call('del', KEYS[1])
-- Latched first as well (status + 20: a repeat publishes "0" again): made
-- again after its publish failed, the release would find the lock gone and
-- answer "not held".
redis.call('set', KEYS[5], answer + 20, 'px', ARGV[3])
redis.call(ARGV[2], KEYS[2], '0')
return {answer, 0}
