-- IdempotencyReserve claims an idempotency key for the request that brings it
-- first. The record is a hash: state (1 running, 2 done), fp (the request
-- fingerprint), token (the claiming request's random id) and, once done, resp
-- (the stored response). A claim lasts ttl unless renewed or completed.
-- A token that IdempotencyRelease marked released (its reserve had not
-- arrived yet, the caller having given up on it) claims nothing; any other
-- claims the key. State 3 is the tombstone earlier releases left for such a
-- token instead, on a key without a record: read the same way.
--
-- The scope's usage (same hash slot as the record: the scope is the key's
-- hash tag) bounds what one caller makes Redis keep: usage is a zset of the
-- scope's records scored by expiry time, sizes a hash of their accounted
-- bytes plus the field "#total". Expired entries are pruned here, a few per
-- call, and more (a bounded number) before a new claim is refused: it is
-- refused while #total, less the expired entries read, is over the budget
-- (0: none).
-- Reply {0, nil, nil}: claimed by this token, run the request (also when this
-- token already holds the claim, so a retry after a lost reply is safe);
-- {1, fp, nil}: another request with this key is running;
-- {2, fp, resp}: completed, replay resp;
-- {3, nil, nil}: this token's reservation was released before it arrived;
-- {4, nil, nil}: the scope's budget is spent, nothing claimed.
-- A server out of memory (maxmemory, noeviction) refuses new claims and
-- still answers the others: a claim's first write is its HSET, which Redis
-- refuses, and the script with it, when it is a script's first write that
-- may use memory. So nothing is written before it: the pruning is read
-- first and written after. (A #!lua line would make Redis refuse every
-- call on a full server, replays included.)
-- Not marked retryable: the client does not repeat it by itself. Store.Reserve
-- repeats a call whose outcome is unknown, and fails at once on one that
-- could not be sent (no connection to Redis), as a lock acquisition does.
-- @key    record
-- @key    usage
-- @key    sizes
-- @key    released     this token's release mark (see IdempotencyRelease)
-- @arg    fingerprint  string
-- @arg    token        string
-- @arg    ttl          duration
-- @arg    budget       int64      bytes the scope may keep; 0 for no limit
-- @arg    claimSize    int64      bytes accounted for a running claim
-- @return {state int64, fingerprint string?, response bytes?}
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired, freed, ownExpired = {}, 0, false
-- readExpired reads the next count expired entries (after those read) and
-- reports whether there may be more.
local function readExpired(count)
  local batch = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'limit', #expired, count)
  if #batch == 0 then
    return false
  end
  -- One HMGET per batch: a call per entry made a long backlog cost the
  -- server milliseconds per call, during which it answers nobody.
  local got = redis.call('hmget', KEYS[3], unpack(batch))
  for j, m in ipairs(batch) do
    expired[#expired + 1] = m
    freed = freed + tonumber(got[j] or '0')
    ownExpired = ownExpired or m == KEYS[1]
  end
  return #batch == count
end
local more = readExpired(16)
local function prune()
  if #expired > 0 then
    redis.call('hdel', KEYS[3], unpack(expired))
    redis.call('zrem', KEYS[2], unpack(expired))
  end
  -- 0 - freed, not -freed: -0 reaches Redis as "-0", which it refuses as an
  -- integer (after the claim's first write).
  if freed ~= 0 then
    redis.call('hincrby', KEYS[3], '#total', 0 - freed)
  end
end

local rec = redis.call('hmget', KEYS[1], 'state', 'fp', 'token', 'resp')
if rec[1] == '3' and rec[3] == ARGV[2] then
  prune()
  return {3, false, false}
end
if not rec[1] or rec[1] == '3' then
  if redis.call('exists', KEYS[4]) == 1 then
    -- Released before it arrived, perhaps while another request held the
    -- key and since released it: no request would run under this claim.
    prune()
    return {3, false, false}
  end
  local budget = tonumber(ARGV[4])
  local size = tonumber(ARGV[5])
  local old, total = 0, 0
  local function over()
    old = 0
    if not ownExpired then
      old = tonumber(redis.call('hget', KEYS[3], KEYS[1]) or '0')
    end
    total = tonumber(redis.call('hget', KEYS[3], '#total') or '0') - freed
    return budget > 0 and total - old + size > budget
  end
  -- Expired records count until they are pruned. A scope found over its
  -- budget reads more of them (up to 512 more per call) before it is
  -- refused, so that records that have expired, more than one call prunes
  -- (the scope went over its budget with the responses of requests that
  -- were running), no longer refuse it. The bound keeps a call under a
  -- millisecond of the server's time with a backlog of 100,000 expired
  -- records (0.8 ms on a loaded 2-core machine; 1,040 records a call took
  -- 1.8 ms), during which it answers nobody.
  local refused = over()
  local rounds = 0
  while refused and more and rounds < 4 do
    more = readExpired(128)
    refused = over()
    rounds = rounds + 1
  end
  if refused then
    prune()
    return {4, false, false}
  end
  -- The first write (see above). A tombstone has only state and token,
  -- which this replaces.
  redis.call('hset', KEYS[1], 'state', '1', 'fp', ARGV[1], 'token', ARGV[2])
  prune()
  redis.call('pexpire', KEYS[1], ARGV[3])
  local exp = now + tonumber(ARGV[3])
  redis.call('hset', KEYS[3], KEYS[1], ARGV[5])
  redis.call('hincrby', KEYS[3], '#total', size - old)
  redis.call('zadd', KEYS[2], exp, KEYS[1])
  if redis.call('pttl', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('pexpire', KEYS[2], ARGV[3])
  end
  if redis.call('pttl', KEYS[3]) < tonumber(ARGV[3]) then
    redis.call('pexpire', KEYS[3], ARGV[3])
  end
  return {0, false, false}
end
prune()
if rec[1] == '2' then
  return {2, rec[2], rec[4]}
end
if rec[3] == ARGV[2] then
  return {0, false, false}
end
return {1, rec[2], false}
