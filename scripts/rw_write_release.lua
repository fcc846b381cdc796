#!lua flags=allow-oom
-- RwWriteRelease gives up one write hold. The last one deletes the lock and
-- publishes "1" (Redisson's READ_UNLOCK: every waiter on every client
-- retries, readers and writers alike), or, when the same owner still reads,
-- switches the lock to read mode and publishes "1" too: other readers may now
-- enter (RedissonWriteLock publishes nothing there, and its readers sleep
-- until the lock's expiry). From then on the read holds' leases govern the lock's expiry (Redisson
-- keeps the write lease, so a dead reader would keep writers out for the rest
-- of it); when none of them has a lease left, the lock is deleted as on the
-- last write release. A per-call latch makes a retried release answer the first outcome.
-- The latch is written before the publish, and a release that publishes
-- latches its status + 10, on which a repeat publishes "1" again (one that
-- freed the lock, only while it is free or in read mode): the first
-- attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH), and a repeat that found no latch would
-- give up a hold a second time, or answer "not held" for a lock it freed.
-- Giving up one of several write holds sets the expiry to the lease of those
-- left (at least the writer's read leases); when that brings it forward it
-- publishes "1" as well.
-- A shared owner's release names its hold's fencing token (token, 0 for
-- none) and leaves a newer write hold of the same field alone, as
-- MutexRelease.
-- Reply {0, 0}: not held by this owner; {1, holds}: still held; {2, 0}: released.
-- @key    lock
-- @key    channel        redisson_rwlock:{name}
-- @key    latch          redisson_unlock_latch:{name}:<request-id>
-- @key    prefix         {name}, the prefix of every owner's lease keys
-- @key    fence          fencing-token counter (redisson_lock_token:{name})
-- @arg    lease          duration
-- @arg    writeOwner     string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    latchTTL       duration
-- @arg    token          int64      the fencing token of a shared owner's hold, 0 for none
-- @return {status int64, value int64}
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
local seen = tonumber(redis.call('get', KEYS[3]))
if seen then
  if seen > 10 then
    -- A repeat of a release that freed the lock (12) tells the waiters
    -- only while readers may enter: a waiter the first attempt woke may
    -- hold it by now, and "1" would send every waiter to Redis for nothing.
    -- (pcall: the name may since hold another kind of lock.)
    if seen == 11 or redis.call('exists', KEYS[1]) == 0 or redis.pcall('hget', KEYS[1], 'mode') == 'read' then
      -- Checked before it publishes, as a release is (below).
      if redis.acl_check_cmd then
        local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], KEYS[2], '0')
        if not known then
          return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[3] .. ' for the release message; nothing changed')
        end
        if not allowed then
          if not redis.acl_check_cmd(ARGV[3]) then
            return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[3] .. ' command at all (the command is refused, not the channel); nothing changed')
          end
          return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[3] .. ' the release message to channel ' .. (string.gsub(KEYS[2], '%c', '?')) .. ' (the channel is refused); nothing changed')
        end
      end
      redis.call(ARGV[3], KEYS[2], '1')
    end
    seen = seen - 10
  end
  return {seen, 0}
end
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return {0, 0}
end
if ARGV[5] ~= '0' then
  local drawn = redis.call('get', KEYS[5])
  if drawn and drawn ~= ARGV[5] then
    return {0, 0}
  end
end
-- The longest lease left of the read holds (only the writer's own can exist
-- in write mode): the lock must not expire before it. O(read holds).
local function longestRead()
  local longest = -3
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local n = tonumber(redis.call('hget', KEYS[1], field))
    if n then
      for i = n, 1, -1 do
        local ttl = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
        if ttl > longest then
          longest = ttl
        end
      end
    end
  end
  return longest
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
  local known, allowed = pcall(redis.acl_check_cmd, ARGV[3], KEYS[2], '0')
  if not known then
    return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. ARGV[3] .. ' for the release message; nothing changed')
  end
  if not allowed then
    if not redis.acl_check_cmd(ARGV[3]) then
      return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. ARGV[3] .. ' command at all (the command is refused, not the channel); nothing changed')
    end
    return redis.error_reply('NO_PUBLISH the ACL user may not ' .. ARGV[3] .. ' the release message to channel ' .. (string.gsub(KEYS[2], '%c', '?')) .. ' (the channel is refused); nothing changed')
  end
end
local holds = redis.call('hincrby', KEYS[1], ARGV[2], '-1')
if holds > 0 then
  local ttl = math.max(tonumber(ARGV[1]), longestRead())
  local before = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], ttl)
  if before < 0 or ttl < before then
    -- A re-entry with a longer lease given up: waiters were told the
    -- longer TTL (as for an Extend to a shorter lease, RwWriteRenew).
    redis.call('set', KEYS[3], '11', 'px', ARGV[4])
    redis.call(ARGV[3], KEYS[2], '1')
  else
    redis.call('set', KEYS[3], '1', 'px', ARGV[4])
  end
  return {1, holds}
end
redis.call('hdel', KEYS[1], ARGV[2])
local longest = -3
if redis.call('hlen', KEYS[1]) > 1 then
  longest = longestRead()
end
if longest > 0 then
  -- The write hold's renewals set the lock's expiry; from now on the read
  -- holds left govern it: the lock lives as long as the longest of them.
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('pexpire', KEYS[1], longest)
else
  redis.call('del', KEYS[1])
end
redis.call('set', KEYS[3], '12', 'px', ARGV[4])
redis.call(ARGV[3], KEYS[2], '1')
return {2, 0}
