#!lua flags=allow-oom
-- FairCancel takes a waiter that gives up (its wait or context ended) out of a
-- fair lock's queue. If it was first in line and the lock is free, the next
-- live waiter is told, as FairRelease tells it (waiters whose deadline passed
-- are evicted first), so the lock does not sit idle; if the lock is held
-- with an expiry, the next waiter is told all the same, to learn the
-- holder's lease now that it is first in line. LREM walks the
-- queue up to the waiter: O(position), on the rare path only.
-- A repeat (the attempt before it may have failed at its publish, after its
-- writes: a refused SPUBLISH, made again with PUBLISH) finds the waiter gone
-- and tells the head all the same, as if the waiter had been first in line:
-- a name told once more costs that waiter one call.
-- Reply true when the waiter was queued.
-- @key    lock
-- @key    queue          scriptlock_fair_queue:{name}
-- @key    timeouts       scriptlock_fair_timeout:{name}
-- @key    wake           scriptlock_fair_wake:{name}; the first waiter's client's channel is <wake>:<client-id>
-- @arg    owner          string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    repeat         bool       an earlier attempt of this leave may have run
-- @return bool
-- @retryable
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
local queued = redis.call('zscore', KEYS[3], ARGV[1]) ~= false
if not queued and ARGV[3] ~= '1' then
  return 0
end
local wasHead = true
if queued then
  wasHead = redis.call('lindex', KEYS[2], '0') == ARGV[1]
end
-- told is the waiter the call tells, found before it writes so that its
-- channel is checked first (refusal): a publish the ACL refused after the
-- writes failed the call with the waiter gone and the next one not told.
-- A free lock tells the first waiter left whose deadline has not passed
-- (the call evicts those before it); a held one, the first waiter left.
local free = false
local told = nil
local now = 0
if wasHead then
  free = redis.call('exists', KEYS[1]) == 0
  if free then
    local t = redis.call('time')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  if free or redis.call('pttl', KEYS[1]) > 0 then
    local from = 0
    while not told do
      local page = redis.call('lrange', KEYS[2], tostring(from), tostring(from + 99))
      for _, entry in ipairs(page) do
        if entry ~= ARGV[1] then
          local deadline = not free or redis.call('zscore', KEYS[3], entry)
          if not free or deadline and tonumber(deadline) > now then
            told = entry
            break
          end
        end
      end
      if #page < 100 then
        break
      end
      from = from + 100
    end
  end
end
if told then
  local err = refusal(ARGV[2], {KEYS[4] .. ':' .. string.match(told, '^[^:]*')})
  if err then
    return err
  end
end
if queued then
  redis.call('zrem', KEYS[3], ARGV[1])
  redis.call('lrem', KEYS[2], '1', ARGV[1])
end
if wasHead and free then
  local head = redis.call('lindex', KEYS[2], '0')
  if head then
    while head do
      local deadline = redis.call('zscore', KEYS[3], head)
      if deadline and tonumber(deadline) > now then
        break
      end
      redis.call('lpop', KEYS[2])
      redis.call('zrem', KEYS[3], head)
      head = redis.call('lindex', KEYS[2], '0')
    end
  end
  if head then
    redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(head, '^[^:]*'), '0:' .. head)
  end
elseif told then
  -- The lock is held: the next waiter, first in line now, sleeps a third of
  -- its timeout, where a head sleeps no longer than the holder's lease (in
  -- case the holder dies). It is told to ask again and learn the lease. A
  -- held lock evicts nobody, as in FairAcquire.
  redis.call(ARGV[2], KEYS[4] .. ':' .. string.match(told, '^[^:]*'), '0:' .. told)
end
if not queued then
  return 0
end
return 1
