#!lua flags=allow-oom
-- RwReadExtend sets the lease of an owner's read holds to `lease` from now
-- (Extend): every lease key of the owner, then, unless a write hold governs
-- the lock, the hash's expiry to the longest read-hold lease left, as a read
-- release computes it (O(read holds)). Reply false when the owner no longer
-- reads (expired, deleted), so the holder has lost the lock. One that brings
-- the lock's expiry forward publishes "1", as a read release that does so:
-- waiters of every client, Go's and Redisson's, were told the longer TTL and
-- would sleep on it. A repeat finds the expiry it set and publishes nothing,
-- but for a repeat of an attempt that failed at its publish, after its writes
-- (a refused SPUBLISH, made again with PUBLISH: again), which publishes as
-- that attempt was to.
-- Not retryable: rueidis would send an Extend whose connection broke again
-- on the next one while its caller waits, also after its hold ended (an
-- Unlock that failed leaves the lock only until its lease ends): Extend
-- makes such a call again itself while the hold lasts.
-- @key    lock
-- @key    timeouts       {name}:<owner>:rwlock_timeout
-- @key    prefix         {name}, the prefix of every owner's lease keys
-- @key    channel        redisson_rwlock:{name}
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    nonce          int64      the mark of a shared owner's hold (RwReadAcquire), 0: no check
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    again          bool       a repeat of an attempt that failed at its publish: publish "1"
-- @return bool
-- @commands publish spublish
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- refusal is the error a publish of this call would fail with after its
-- writes, checked before them (Redis 7's acl_check_cmd) so that a refused
-- call changes nothing: NO_PUBLISH, saying whether the ACL user may not
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
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(publish) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  return nil
end
local holds = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if not holds then
  return 0
end
if ARGV[3] ~= '0' then
  -- A first lease key marked otherwise (not 1) is a newer hold of the
  -- owner, taken since this call was sent: not held (see RwReadRelease).
  local mark = redis.call('get', KEYS[2] .. ':1')
  if mark and mark ~= '1' and mark ~= ARGV[3] then
    return 0
  end
end
-- What the call will publish is found before it writes: a publish the ACL
-- refused after the writes failed the call with the shorter lease set and
-- nobody told. The longest lease left is read first, the owner's own keys
-- counted at the lease they are given.
local write = redis.call('hget', KEYS[1], 'mode') == 'write'
local longest = tonumber(ARGV[1])
local before
if not write then
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local n = tonumber(redis.call('hget', KEYS[1], field))
    if n and field ~= ARGV[2] then
      for i = n, 1, -1 do
        local ttl = redis.call('pttl', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. i)
        if ttl > longest then
          longest = ttl
        end
      end
    end
  end
  before = redis.call('pttl', KEYS[1])
  if before < 0 or longest < before or ARGV[5] == '1' then
    local err = refusal(ARGV[4], {KEYS[4]})
    if err then
      return err
    end
  end
end
for i = 1, holds do
  -- PEXPIRE keeps the first key's mark (RwReadAcquire); a key that expired
  -- is made again.
  if redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1]) == 0 then
    redis.call('set', KEYS[2] .. ':' .. i, '1', 'px', ARGV[1])
  end
end
if write then
  -- The write hold's lease may be shorter: the lock must outlive this one.
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return 1
end
redis.call('pexpire', KEYS[1], longest)
if before < 0 or longest < before or ARGV[5] == '1' then
  redis.call(ARGV[4], KEYS[4], '1')
end
return 1
