#!lua
-- RecordReserveStrict is RecordReserve for a recorded call that a server
-- out of memory refuses (DrainPermits): without allow-oom, Redis refuses
-- the reservation too, before it runs, so such a call changes nothing there.
-- The call runs only while its reservation (an empty value) or its own
-- answer is there: held up on its way and reaching the server after its
-- caller gave up, it would otherwise take what was released since.
-- Reply true: reserved; false: the key was set already (by this call's first
-- attempt, or its answer).
-- @key    record    the call's record key
-- @arg    ttl       duration  how long the caller still waits
-- @return bool
-- @retryable
if redis.call('set', KEYS[1], '', 'nx', 'px', ARGV[1]) then
  return 1
end
return 0
