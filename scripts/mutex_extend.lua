#!lua flags=allow-oom
-- MutexExtend is MutexRenew for Extend: it sets the lease of a lock this
-- owner still holds, and when that brings the lock's expiry forward it
-- publishes Redisson's "0" on the lock's channel. A Redisson waiter refused
-- while the longer lease was in force sleeps on the TTL it read then; the
-- "0" makes it call again (the lock still held, it is refused) and read the
-- new one, so that it does not wait out the old lease should the holder die.
-- The head of Redisson's fair queue (an RFairLock waiter, on the same lock
-- hash) hears only its own channel, <channel>:<field>: it gets "0" there.
-- Asking again, a queued RFairLock waiter reads its own estimate, its score
-- less threadWaitTime and now (Redisson before 3.32.0, and
-- WithRedissonFairQueue), not the lock's TTL: every queued waiter's score
-- moves earlier by as much as the expiry did, as Redisson's scores follow
-- the lock's expiry, so that the head reads the new TTL. No score goes
-- below the head's deadline under the new lease (now + lease +
-- threadWaitTime), as for a re-entry (FairRedissonAcquire): the scores
-- follow the expiry a waiter was told when it queued, not later renewals
-- or longer Extends, and one moved past now would get a live waiter
-- evicted by the next caller. A FairMutex on Redisson's queue sends its
-- clock and threadWaitTime (floor); without them (a Mutex, or a FairMutex
-- on its own queue, which know no threadWaitTime) the server's clock and
-- Redisson's default threadWaitTime stand in, read only when scores move,
-- so that the usual Extend sends and costs nothing more.
-- A lease that leaves the expiry later publishes nothing, as the watchdog's
-- renewals (MutexRenew) never do. Made again after its reply was lost, it
-- finds the expiry it set and publishes nothing more; a repeat of an attempt
-- that failed at its publish, after its writes (a refused SPUBLISH, made
-- again with PUBLISH: again), publishes as that attempt was to. Reply true: extended;
-- false: the owner no longer holds it, nothing written or published. The
-- fencing token names the hold, as for MutexRenew.
-- Not retryable: rueidis would send an Extend whose connection broke again
-- on the next one while its caller waits, also after its hold ended (an
-- Unlock that failed leaves the lock only until its lease ends): Extend
-- makes such a call again itself while the hold lasts.
-- @key    lock
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @key    channel   redisson_lock__channel:{name}; a Redisson fair waiter's channel is <channel>:<field>
-- @key    queue     redisson_lock_queue:{name}, Redisson's fair queue
-- @key    timeouts  redisson_lock_timeout:{name}, its waiters' scores
-- @arg    lease     duration
-- @arg    owner     string
-- @arg    token     int64     the fencing token of the hold, 0 for none
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @arg    again     bool      a repeat of an attempt that failed at its publish: publish as it was to
-- @arg    floor...  string    now (ms, the caller's clock, as Redisson's currentTime) and threadWaitTime (ms); none: the server's clock and 300000
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
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  if ARGV[3] ~= '0' then
    local drawn = redis.call('get', KEYS[2])
    if drawn and drawn ~= ARGV[3] then
      return 0
    end
  end
  local before = redis.call('pttl', KEYS[1])
  local earlier = before < 0 or tonumber(ARGV[1]) < before
  local head = false
  if earlier or ARGV[5] == '1' then
    -- Its messages are checked before the writes: a publish the ACL
    -- refused after them failed the call with the shorter lease set and
    -- nobody told. A renewal that publishes nothing checks nothing.
    head = redis.call('lindex', KEYS[4], '0')
    local channels = {KEYS[3]}
    if head then
      channels[2] = KEYS[3] .. ':' .. head
    end
    local err = refusal(ARGV[4], channels)
    if err then
      return err
    end
  end
  redis.call('pexpire', KEYS[1], ARGV[1])
  if earlier or ARGV[5] == '1' then
    -- Every write before the first publish, which can fail (a refused
    -- SPUBLISH): the repeat (again) finds them done and only publishes.
    if head and earlier and before >= 0 then
      local by = before - tonumber(ARGV[1])
      local low = redis.call('zrange', KEYS[5], '0', '0', 'withscores')
      if low[2] then
        local now, waitTime = tonumber(ARGV[6]), tonumber(ARGV[7])
        if not now then
          local t = redis.call('time')
          now = t[1] * 1000 + math.floor(t[2] / 1000)
        end
        local room = tonumber(low[2]) - (now + tonumber(ARGV[1]) + (waitTime or 300000))
        if room < by then
          by = room
        end
      end
      if by > 0 then
        for _, w in ipairs(redis.call('zrange', KEYS[5], '0', '-1')) do
          redis.call('zincrby', KEYS[5], -by, w)
        end
      end
    end
    redis.call(ARGV[4], KEYS[3], '0')
    if head then
      redis.call(ARGV[4], KEYS[3] .. ':' .. head, '0')
    end
  end
  return 1
end
return 0
