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
-- @error  NO_PUBLISH  the caller's ACL user may not publish to the channel of a message the call sends; nothing changed
-- @error  UNKNOWN_COMMAND  the server has no such publish command (SPUBLISH renamed away); nothing changed
-- @retryable
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
-- javaCount is a count as a message carries it: a Redisson waiter reads
-- the message as a Long and wakes intValue() of its acquirers, so a count
-- past 2^31 - 1 would wrap to 0 or below and wake none; capped there, it
-- still wakes every one (and a Go waiter as many as it has). Always an
-- integer (a count below -2^31 capped there): a count another client wrote
-- as a float (Redisson's addPermits, past 10^17 either way), which a
-- repeat publishes as it finds it, is no Long, and a Redisson waiter could
-- not read the message.
local function javaCount(v)
  local n = tonumber(v)
  if n ~= n then
    return '0'
  end
  if n > 2147483647 then
    return '2147483647'
  end
  if n < -2147483648 then
    return '-2147483648'
  end
  return string.format('%d', n)
end
-- refusal is the error a publish of this call would fail with after its
-- writes, checked before them (Redis 7's acl_check_cmd) so that a refused
-- release changes nothing: NO_PUBLISH, saying whether the ACL user may not
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
      return redis.error_reply('UNKNOWN_COMMAND the server has no ' .. publish .. ' for the release message; nothing changed')
    end
    if not allowed then
      if not redis.acl_check_cmd(publish) then
        return redis.error_reply('NO_PUBLISH the ACL user may not run the ' .. publish .. ' command at all (the command is refused, not the channel); nothing changed')
      end
      return redis.error_reply('NO_PUBLISH the ACL user may not ' .. publish .. ' the release message to channel ' .. (string.gsub(ch, '%c', '?')) .. ' (the channel is refused); nothing changed')
    end
  end
  return nil
end
local taken = redis.call('get', KEYS[3])
local given = taken and string.match(taken, '^undone:(%d+)$')
if given then
  local value = redis.call('get', KEYS[1])
  if value and permits(value) then
    local err = refusal(ARGV[2], {KEYS[2]})
    if err then
      return err
    end
    redis.call(ARGV[2], KEYS[2], javaCount(value))
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
  if value and not permits(value) then
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
-- Checked before the writes: a publish refused after them failed the call
-- with the permits given back, and the caller, told it failed, tried again
-- for the record's life and logged them as maybe lost.
local err = refusal(ARGV[2], {KEYS[2]})
if err then
  return err
end
-- The count first: one INCRBY refuses (past 2^63 - 1, or not an integer:
-- Redisson's addPermits writes a sum of 10^17 or more as a float) fails the call
-- here with nothing changed, the record not yet marked, so a later attempt
-- can still give the permits back.
local value = redis.call('incrby', KEYS[1], taken)
redis.call('set', KEYS[3], 'undone:' .. taken, 'px', ARGV[1])
redis.call(ARGV[2], KEYS[2], javaCount(value))
return tonumber(taken)
