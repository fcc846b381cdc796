#!lua flags=allow-oom
-- SemaphoreUndo gives back the permits of an acquisition attempt whose reply
-- was lost (or of a DrainPermits of unknown outcome, or one the failover
-- guard undoes), once: when its latch records permits taken, they are added back
-- (and announced, as a release is); either way the latch is left marking the
-- attempt undone for latchTTL, so the attempt cannot take permits later.
-- The latch of an undo that gave permits back records how many
-- ("undone:<n>"): a repeat answers n and announces the count again, as the
-- first attempt may have failed at its publish, after its writes (a refused
-- SPUBLISH, made again with PUBLISH).
-- An attempt that took permits before a Delete (the deleted key holds
-- another mark than the one its latch recorded) gives nothing back: they
-- were the deleted count's, and the count there now, if any, was set since;
-- the latch is marked undone. (A Delete after the attempt left its mark
-- there for as long as the latch lives.)
-- So does one whose count is gone (deleted without a mark, by Redisson's
-- delete, or its TTL ran out) and not set again: a give-back would set a
-- count nobody set.
-- Reply: the permits given back (0 when the attempt took none, or took
-- them from a count deleted since).
-- When the attempt took permits (from a count not deleted since) and the
-- key now holds no count (a LeanMutex's owner) it fails with NOT_COUNT, and
-- another kind's hash with WRONGTYPE, before anything is written: the latch
-- is not marked.
-- @key    semaphore
-- @key    channel   redisson_sc:{name}
-- @key    latch     the attempt's record (see SemaphoreAcquire)
-- @key    deleted   redisson_sc_latch:{name}:deleted, the mark of the last Delete
-- @arg    latchTTL  duration
-- @arg    publish   string    "publish", or "spublish" for sharded channels
-- @return int64
-- @error  NOT_COUNT  the key holds no count: another kind of lock uses the name
-- @commands publish spublish
-- @retryable
local taken = redis.call('get', KEYS[3])
local given = taken and string.match(taken, '^undone:(%d+)$')
if given then
  local value = redis.call('get', KEYS[1])
  if value and tonumber(value) then
    redis.call(ARGV[2], KEYS[2], value)
  end
  return tonumber(given)
end
-- An acquisition's record is "<n>:<mark>", and so is that of a drain that
-- took permits (DrainPermits given back under the failover guard); one
-- written before marks were kept is the count alone. Permits taken before a
-- later Delete go back to nobody, whatever uses the name now.
local n, mark = false, false
if taken then
  n, mark = string.match(taken, '^(%d+):(.*)$')
end
if n then
  local deleted = redis.call('get', KEYS[4])
  if deleted and deleted ~= mark then
    redis.call('set', KEYS[3], 'undone', 'px', ARGV[1])
    return 0
  end
  taken = n
elseif taken and (not string.match(taken, '^%d+$') or tonumber(taken) == 0) then
  -- No permits recorded: a drain's reservation (empty: the drain has not
  -- run, and finding the record undone it takes nothing when it lands),
  -- one of a count of 0 or less (it took none), or an undo's mark.
  taken = false
end
local gone = false
if taken ~= false and taken ~= 'undone' then
  local value = redis.call('get', KEYS[1])
  if value and not tonumber(value) then
    return redis.error_reply('NOT_COUNT the key holds no count: another kind of lock uses the name')
  end
  -- The count the attempt took from is gone since (nothing else removes
  -- it): deleted without a mark (Redisson's delete), or its TTL ran out.
  -- Those permits went with it; giving them back would set a count nobody
  -- set, on which a TrySetPermits then sets nothing.
  gone = not value
end
if taken == false or taken == 'undone' or gone then
  redis.call('set', KEYS[3], 'undone', 'px', ARGV[1])
  return 0
end
redis.call('set', KEYS[3], 'undone:' .. taken, 'px', ARGV[1])
local value = redis.call('incrby', KEYS[1], taken)
redis.call(ARGV[2], KEYS[2], value)
return tonumber(taken)
