#!lua flags=allow-oom
-- RecordReserve reserves the record key of a recorded deletion (ForceUnlock,
-- a semaphore's or latch's Delete; also a PermitSemaphore's SetPermits,
-- which would undo a total set since) before the deletion is sent, for as long
-- as its caller waits for it: the deletion runs only while its reservation
-- (an empty value) or its own answer is there. Sent but held up on the way
-- (a stalled connection, a frozen proxy) and reaching the server after its
-- caller gave up, it would otherwise delete whatever holds the name by then:
-- a lock or a count taken after the caller's deadline. A repeat after a lost
-- reply finds the key set and leaves it as it is.
-- Reply true: reserved; false: the key was set already (by this call's first
-- attempt, or its answer).
-- @key    record    the deletion's record key
-- @arg    ttl       duration  how long the caller still waits
-- @return bool
-- @retryable
if redis.call('set', KEYS[1], '', 'nx', 'px', ARGV[1]) then
  return 1
end
return 0
