#!lua
-- SemaphoreAcquire takes n permits if that many are available. A taken
-- attempt is recorded under its latch key for latchTTL, as "<n>:<mark>",
-- the mark of the last Delete (SemaphoreDelete; empty when none is
-- recorded), so an attempt whose reply was lost can be undone exactly once
-- (SemaphoreUndo), and not into a count set after a later Delete; an
-- attempt that arrives after its undo finds the latch and takes nothing.
-- Reply {1, left}: taken, left = permits still available;
-- {0, available}: not enough permits (or undone already), nothing changed.
-- A key that holds no count (a LeanMutex's owner) fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written.
-- @key    semaphore
-- @key    latch     redisson_sc_latch:{name}:<client-id>:<n>, this attempt's record
-- @key    deleted   redisson_sc_latch:{name}:deleted, the mark of the last Delete
-- @arg    n         int64
-- @arg    latchTTL  duration
-- @return {ok int64, permits int64}
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
local value = redis.call('get', KEYS[1])
if value and not tonumber(value) then
  return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
end
value = tonumber(value or '0')
if redis.call('exists', KEYS[2]) == 1 then
  return {0, value}
end
local n = tonumber(ARGV[1])
if value >= n then
  -- The count first: one DECRBY refuses (not an integer: Redisson's
  -- addPermits writes a sum of 10^17 or more as a float) fails the call here with
  -- nothing written, its record neither.
  local left = redis.call('decrby', KEYS[1], ARGV[1])
  redis.call('set', KEYS[2], ARGV[1] .. ':' .. (redis.call('get', KEYS[3]) or ''), 'px', ARGV[2])
  return {1, left}
end
return {0, value}
