-- FenceRead reads a fencing-token counter for an undo's release to name (see
-- MutexRelease's token): a fresh grant draws the next token, so a release
-- naming the counter as it was before the undo read the holds leaves a grant
-- made since alone. 0 (name none) when the counter is missing, holds no
-- integer a token could be, or is of another kind.
-- @key    fence     fencing-token counter (redisson_lock_token:{name})
-- @return int64
-- @readonly
local value = redis.pcall('get', KEYS[1])
local n = type(value) == 'string' and string.match(value, '^[1-9]%d*$') and tonumber(value)
if not n or n >= 9007199254740992 then
  return 0
end
return n
