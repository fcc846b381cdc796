-- Inspect reads, without changing anything, every lock layout that can live
-- under one name, for operators. Layouts are told apart by key type and
-- existence: a hash under the name is a lock (Mutex or FairMutex: owner
-- fields; RWMutex: a mode field as well), a string is a counter (Semaphore,
-- PermitSemaphore or CountDownLatch) or a LeanMutex (its owner field); the
-- fair queue, the pending-writer set and the permit-lease set say more when
-- they exist.
-- Reply: a flat list of rows of four strings {kind, a, b, c}, in this order:
-- now <server unix ms>; type <type of the name key> <pttl ms>; mode
-- <read|write>; hold <field> <count, empty for a value too long to be one> <read lease ms, for a reader of a
-- read-write lock: the longest of the leases of its first `leaseKeys` read
-- holds; RwReadLease reads those of any further holds>; holds <total fields>;
-- counter <value, its first 4096 bytes, or a LeanMutex's owner field, whole>
-- <"1" when the value is a count the semaphore scripts read, else empty>;
-- fence <last token>; queue <field> <deadline unix ms> <protocol> (queue
-- order); queued <total> <protocol> <live>; writer <field> <deadline unix
-- ms>; writers <total> <live>; permit <id> <lease end unix ms>; permits <held: lease not
-- ended> <lease ended: free to the next acquisition, as PermitState counts>;
-- lwaiter <field> <registered unix ms> (Mutex's Go waiters, in wake order);
-- lwaiters <total>; state <digest>, when asked for (see below).
-- A FairMutex queues under its own keys (protocol scriptlock) or, in its
-- Redisson-compatible mode and for Java services, under Redisson's (protocol
-- redisson); both are read.
-- Collections list at most `limit` entries; their totals are always exact.
-- A queue entry or pending writer is live while its deadline is ahead of the
-- server's clock (Redisson's queue: of the clock its scores are written in);
-- one whose deadline passed is stale, as the acquire scripts judge it: they
-- evict it on their next call. A FairMutex queue entry without a deadline is
-- stale too (FairAcquire evicts it); Redisson's queue keeps such an entry.
-- A companion key of another type (another program's key that has its name)
-- is no part of a lock and is not read.
-- With state, the reply ends with the lock's state digest, which
-- ForceUnlockConfirmed compares, computed as it computes it: the SHA-1 of the
-- name key's type, a hash's mode and every field (all of them, sorted; hold
-- counts are left out: a re-entry is the same hold), a string's value, and
-- the fencing counter (its type and value). A hash of more than 100,000
-- fields or a string of more than 4096 bytes that is no LeanMutex's owner
-- field, which no lock has, has no digest: the row is empty.
-- @key    lock
-- @key    fence      redisson_lock_token:{name}
-- @key    queue      redisson_lock_queue:{name}
-- @key    timeouts   redisson_lock_timeout:{name}
-- @key    writers    redisson_rwlock_writers:{name}
-- @key    permits    {name}:timeout
-- @key    rwprefix   {name}: a reader's read-hold lease keys are <rwprefix>:<field>:rwlock_timeout:<n>
-- @key    fqueue     scriptlock_fair_queue:{name}
-- @key    ftimeouts  scriptlock_fair_timeout:{name}
-- @key    lwaiters   scriptlock_lock_waiters:{name}
-- @arg    limit      int64
-- @arg    leaseKeys  int64      read-hold lease keys read per reader
-- @arg    state      bool       add the state row (force-unlock's digest)
-- @return []string
-- @readonly
local out = {}
local function row(kind, a, b, c)
  out[#out + 1] = kind
  out[#out + 1] = tostring(a or '')
  out[#out + 1] = tostring(b or '')
  out[#out + 1] = tostring(c or '')
end
-- stateOf is ForceUnlockConfirmed's, word for word.
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
-- permits reads a semaphore's count: an integer INCRBY takes (no '+', no
-- leading zero, within 64 bits), or a float Redisson's addPermits writes for
-- a sum of 10^17 or more either way ("1e+17", "-1.2345678901234568e+17",
-- "9223372036854776000"); nil for any other string, which holds no count.
-- Lua's tonumber also reads "nan", "inf", "2.5", "0x10", "1e3", " 2" and
-- "007" ("nan" as -2^63).
local function permits(v)
  local sign, d = string.match(v, '^(-?)([1-9]%d*)$')
  if d then
    local max = (sign == '-') and '9223372036854775808' or '9223372036854775807'
    if #d < 19 or (#d == 19 and d <= max) then
      return tonumber(v)
    end
    -- Past 64 bits: a float sum as Redis 7.2 and newer (and Valkey) write
    -- one past 2^62, its shortest digits (17 at most) and up to 7 zeros
    -- ("9223372036854776000"; Redis 7.0 writes "9.2233720368547758e+18").
    if #d <= 24 and #string.match(d, '^(.-)0*$') <= 17 then
      return tonumber(v)
    end
  elseif v == '0' then
    return 0
  elseif string.match(v, '^-?[1-9]e%+%d%d%d?$') or string.match(v, '^-?[1-9]%.%d*[1-9]e%+%d%d%d?$') then
    -- Below 10^17 Redis writes a sum's digits; "1e+400" reads as infinite.
    local n = math.abs(tonumber(v))
    if n >= 100000000000000000 and n < math.huge then
      return tonumber(v)
    end
  end
  return nil
end
local limit = tonumber(ARGV[1])
local leaseKeys = tonumber(ARGV[2])
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
row('now', now)
local function typeOf(key)
  return redis.call('type', key)['ok']
end
local kind = typeOf(KEYS[1])
row('type', kind, redis.call('pttl', KEYS[1]))
if kind == 'hash' then
  local mode = redis.call('hget', KEYS[1], 'mode')
  if mode then
    row('mode', mode)
  end
  local n = 0
  local cursor = '0'
  repeat
    local page = redis.call('hscan', KEYS[1], cursor, 'count', '100')
    cursor = page[1]
    for i = 1, #page[2], 2 do
      local field, count = page[2][i], page[2][i + 1]
      -- A hold count is an integer, 20 characters at most: another
      -- program's value, of any size, is no count and is not sent.
      if #count > 20 then
        count = ''
      end
      if field ~= 'mode' and n < limit then
        local lease = ''
        -- Only an RWMutex's read holds have lease keys: another program's
        -- hash with a "mode" field of its own is not read further.
        if (mode == 'read' or mode == 'write') and string.sub(field, -6) ~= ':write' then
          lease = -2
          for h = 1, math.min(tonumber(count) or 0, leaseKeys) do
            lease = math.max(lease, redis.call('pttl', KEYS[7] .. ':' .. field .. ':rwlock_timeout:' .. h))
          end
        end
        row('hold', field, count, lease)
        n = n + 1
      end
    end
  until cursor == '0' or n >= limit
  local total = redis.call('hlen', KEYS[1])
  if mode then
    total = total - 1
  end
  row('holds', total)
elseif kind == 'string' then
  local value = redis.call('getrange', KEYS[1], '0', '4095')
  if #value == 4096 and string.find(value, '^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x:') then
    -- A LeanMutex's owner field, whose owner id has no bound: whole.
    value = redis.call('get', KEYS[1])
  end
  -- A count as the semaphore scripts read one (their permits check, word
  -- for word): a string Lua's tonumber reads but they refuse is no count.
  local count = ''
  if #value < 4096 and permits(value) then
    count = '1'
  end
  row('counter', value, count)
end
if typeOf(KEYS[2]) == 'string' then
  row('fence', redis.call('get', KEYS[2]))
end
local function queue(list, deadlines, protocol)
  if typeOf(list) == 'list' then
    local timed = typeOf(deadlines) == 'zset'
    for _, field in ipairs(redis.call('lrange', list, '0', limit - 1)) do
      local deadline = false
      if timed then
        deadline = redis.call('zscore', deadlines, field)
      end
      row('queue', field, deadline, protocol)
    end
    local total = redis.call('llen', list)
    -- Every queued waiter has its deadline in the zset (its entry leaves
    -- both together), so the live ones are counted there, in O(log n).
    local live, scored = 0, 0
    if timed then
      live = redis.call('zcount', deadlines, '(' .. now, '+inf')
      scored = redis.call('zcard', deadlines)
    end
    if protocol == 'redisson' then
      -- Redisson keeps an entry without a score: it is live.
      live = live + math.max(0, total - scored)
    end
    row('queued', total, protocol, math.min(live, total))
  end
end
queue(KEYS[8], KEYS[9], 'scriptlock')
queue(KEYS[3], KEYS[4], 'redisson')
if typeOf(KEYS[5]) == 'zset' then
  local w = redis.call('zrange', KEYS[5], '0', limit - 1, 'withscores')
  for i = 1, #w, 2 do
    row('writer', w[i], w[i + 1])
  end
  row('writers', redis.call('zcard', KEYS[5]), redis.call('zcount', KEYS[5], '(' .. now, '+inf'))
end
if typeOf(KEYS[6]) == 'zset' then
  local p = redis.call('zrange', KEYS[6], '0', limit - 1, 'withscores')
  for i = 1, #p, 2 do
    row('permit', p[i], p[i + 1])
  end
  -- A permit whose lease ended is no longer held: the next acquisition
  -- returns it to the pool.
  local ended = redis.call('zcount', KEYS[6], '0', now)
  row('permits', redis.call('zcard', KEYS[6]) - ended, ended)
end
if typeOf(KEYS[10]) == 'zset' then
  local w = redis.call('zrange', KEYS[10], '0', limit - 1, 'withscores')
  for i = 1, #w, 2 do
    row('lwaiter', w[i], w[i + 1])
  end
  row('lwaiters', redis.call('zcard', KEYS[10]))
end
if ARGV[3] == '1' then
  row('state', stateOf(KEYS[1], KEYS[2]))
end
return out
