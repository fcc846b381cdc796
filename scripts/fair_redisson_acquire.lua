#!lua
-- FairRedissonAcquire takes a fair lock by Redisson's RFairLock queue
-- protocol, for fleets where Java services queue on the same name: queue
-- redisson_lock_queue:{name}, scores in redisson_lock_timeout:{name} =
-- (previous waiter's score, or the lock's pttl when none) + waitTime + now,
-- with now from the caller's clock as Redisson sends it. Stale heads
-- (score <= now) are evicted first. Taking the lock from the queue lowers
-- every other waiter's score by waitTime (O(waiters)), as Redisson does; a
-- waiter already queued keeps its score and gets Redisson's estimate
-- score - waitTime - now. With enqueue 0 the caller is never queued
-- (Redisson's tryLock without wait).
-- Reply {1, token, 0}: acquired; {2, holds, 0}: re-entered; {0, ttl, head}:
-- not acquired (ttl as Redisson computes it; head 1 when the caller is first).
-- A re-entry with a lease that brings the lock's expiry forward moves every
-- queued waiter's score earlier by as much (no score below now + lease +
-- threadWaitTime, so no live waiter is evicted) and sends "0" to the queue's head
-- on its channel, as an Extend to that lease does (MutexExtend): the head, a
-- Redisson waiter too, slept on the longer TTL it was told, and reads its
-- estimate from its score when it asks again.
-- A lock whose hash has a mode field is a read-write lock's (an RWMutex or
-- Redisson RReadWriteLock holds the name): the call fails with NOT_MUTEX and
-- changes nothing. The re-entry check reads that field with the caller's own
-- (HMGET), and a stale head is evicted only after a check, so a refusal
-- costs no further command.
-- @key    lock
-- @key    queue          redisson_lock_queue:{name}
-- @key    timeouts       redisson_lock_timeout:{name}
-- @key    fence          redisson_lock_token:{name}
-- @key    channel        redisson_lock__channel:{name}; a waiter's channel is <channel>:<field>
-- @arg    lease          duration
-- @arg    owner          string
-- @arg    waitTime       duration   Redisson's threadWaitTime, or the tryLock wait
-- @arg    now            time       the caller's clock, as Redisson's currentTime
-- @arg    enqueue        bool       queue the caller when the lock cannot be taken now
-- @arg    fenceIdle      duration   how long a token counter lives from its start (see MutexAcquire)
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    threadWait     duration   Redisson's threadWaitTime, the floor of the scores a shorter re-entry moves (a TryLock wait sets only the caller's own)
-- @return {status int64, value int64, head int64}
-- @commands publish spublish
-- @error  NOT_MUTEX  the lock is a read-write lock's hash (its mode field): an RWMutex or Redisson RReadWriteLock holds the name
-- @error  BAD_FENCE  the fencing-token counter holds no integer from 0 to 2^53 - 2: tokens drawn from it could not rise above the last
local now = tonumber(ARGV[4])
local waitTime = tonumber(ARGV[3])
local checked = false
while true do
  local first = redis.call('lindex', KEYS[2], '0')
  if first == false then
    break
  end
  local score = redis.call('zscore', KEYS[3], first)
  if score == false or tonumber(score) > now then
    break
  end
  -- Before the first write: a read-write lock's hash is refused as it is.
  if not checked then
    if redis.call('hexists', KEYS[1], 'mode') == 1 then
      return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
    end
    checked = true
  end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 and
   (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], '0') == ARGV[2]) then
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
    local t = redis.call('time')
    token = redis.call('incrby', KEYS[4], t[1] .. string.sub('00000' .. t[2], -6))
    redis.call('pexpire', KEYS[4], ARGV[6])
  end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiters = redis.call('zrange', KEYS[3], '0', '-1')
  for i = 1, #waiters do
    redis.call('zincrby', KEYS[3], -waitTime, waiters[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {1, token, 0}
end
local held = redis.call('hmget', KEYS[1], ARGV[2], 'mode')
if held[2] then
  return redis.error_reply('NOT_MUTEX the lock is held as a read-write lock')
end
if held[1] then
  local before = redis.call('pttl', KEYS[1])
  local holds = redis.call('hincrby', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  if before < 0 or tonumber(ARGV[1]) < before then
    local head = redis.call('lindex', KEYS[2], '0')
    if head then
      if before >= 0 then
        -- The scores follow the expiry a waiter was told when it queued,
        -- not later renewals or longer re-entries: moved by the whole
        -- difference, a score could pass now and the next caller would
        -- evict a live waiter. None goes below the head's deadline under
        -- the new lease (now + lease + threadWaitTime): the head queued with
        -- its own wait, not this caller's TryLock wait, and one moved to a
        -- deadline by a shorter wait reads a negative estimate (Redisson's
        -- lock() then waits for a message only) and is evicted once it passes.
        local earlier = before - tonumber(ARGV[1])
        local low = redis.call('zrange', KEYS[3], '0', '0', 'withscores')
        if low[2] then
          local room = tonumber(low[2]) - (now + tonumber(ARGV[1]) + tonumber(ARGV[8]))
          if room < earlier then
            earlier = room
          end
        end
        if earlier > 0 then
          for _, w in ipairs(redis.call('zrange', KEYS[3], '0', '-1')) do
            redis.call('zincrby', KEYS[3], -earlier, w)
          end
        end
      end
      -- Best effort (pcall): the re-entry is made, and a call made again
      -- would re-enter twice. A refused SPUBLISH (a Cluster without sharded
      -- pub/sub, its waiters listening plainly) is sent again with PUBLISH.
      local channel = KEYS[5] .. ':' .. head
      if type(redis.pcall(ARGV[7], channel, '0')) == 'table' and string.lower(ARGV[7]) == 'spublish' then
        redis.pcall('publish', channel, '0')
      end
    end
  end
  return {2, holds, 0}
end
if ARGV[5] ~= '1' then
  return {0, redis.call('pttl', KEYS[1]), 0}
end
local function isHead()
  if redis.call('lindex', KEYS[2], '0') == ARGV[2] then
    return 1
  end
  return 0
end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine ~= false then
  return {0, tonumber(mine) - waitTime - now, isHead()}
end
local last = redis.call('lindex', KEYS[2], '-1')
local lastTimeout = false
if last ~= false and last ~= ARGV[2] then
  lastTimeout = redis.call('zscore', KEYS[3], last)
end
-- A last waiter with no timeout (its entry removed by hand) is passed over:
-- the caller's estimate starts from the holder's lease instead, where
-- tonumber(nil) would fail the script.
local ttl
if lastTimeout then
  ttl = tonumber(lastTimeout) - now
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + waitTime + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return {0, ttl, isHead()}
