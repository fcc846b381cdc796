#!lua flags=allow-oom
-- RecordUnreserve drops a record's reservation (RecordReserve) after Redis
-- refused the call it was made for (another kind of lock holds the name):
-- such a call changes nothing, not even a record of it. Only the empty
-- reservation is deleted, never a call's answer; a copy of the refused call
-- reaching the server later finds no record and changes nothing (LATE).
-- Reply true: dropped; false: no reservation there.
-- @key    record    the call's record key
-- @return bool
-- @retryable
if redis.call('get', KEYS[1]) == '' then
  redis.call('del', KEYS[1])
  return 1
end
return 0
