-- FenceRead reads a fencing-token counter for an undo's release to name (see
-- MutexRelease's token): a fresh grant draws the next token, so a release
-- naming the counter as it was before the undo read the holds leaves a grant
-- made since alone; an RWMutex read hold's mark (its first lease key, see
-- RwReadAcquire's nonce) is read the same way. -1 when the counter is
-- missing (its idle time ran out, or none was started): a release naming -1
-- finds no counter there, or a grant restarted it since (a release checks a token it names against the
-- counter's value). 0 (name none) when the counter holds no integer a token
-- could be, or is of another kind.
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @return int64
-- @readonly
local value = redis.pcall('get', KEYS[1])
if value == false then
  return -1
end
local n = type(value) == 'string' and string.match(value, '^[1-9]%d*$') and tonumber(value)
if not n or n >= 9007199254740992 then
  return 0
end
return n
