-- Counter adds `by` to k; a negative `by` is refused with NOT_OWNER, zero
-- with an undeclared code (built at run time, so the checker cannot see it).
-- @key k
-- @arg by int64
-- @return int64
-- @error NOT_OWNER the lock is held by another owner
local by = tonumber(ARGV[1])
if by < 0 then return redis.error_reply("NOT_OWNER by is negative") end
local undeclared = string.upper("zero_by")
if by == 0 then return redis.error_reply(undeclared .. " by is zero") end
return redis.call("INCRBY", KEYS[1], ARGV[1])
