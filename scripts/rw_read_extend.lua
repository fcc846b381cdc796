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
-- @retryable
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
for i = 1, holds do
  -- PEXPIRE keeps the first key's mark (RwReadAcquire); a key that expired
  -- is made again.
  if redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1]) == 0 then
    redis.call('set', KEYS[2] .. ':' .. i, '1', 'px', ARGV[1])
  end
end
if redis.call('hget', KEYS[1], 'mode') == 'write' then
  -- The write hold's lease may be shorter: the lock must outlive this one.
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return 1
end
local longest = tonumber(ARGV[1])
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
  local n = tonumber(redis.call('hget', KEYS[1], field))
  if n then
    for i = n, 1, -1 do
      local ttl = redis.call('pttl', KEYS[3] .. ':' .. field .. ':rwlock_timeout:' .. i)
      if ttl > longest then
        longest = ttl
      end
    end
  end
end
local before = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], longest)
if before < 0 or longest < before or ARGV[5] == '1' then
  redis.call(ARGV[4], KEYS[4], '1')
end
return 1
