-- AllArgs echoes its keys and encoded arguments, in order.
-- @key a
-- @key b
-- @arg s string
-- @arg raw bytes
-- @arg n int64
-- @arg f float64
-- @arg flag bool
-- @arg d duration
-- @arg at time
-- @arg rest... int64
-- @return []string
-- @readonly
-- @retryable
local out = {KEYS[1], KEYS[2]}
for i = 1, #ARGV do out[#out + 1] = ARGV[i] end
redis.call("EXISTS", KEYS[1], KEYS[2])
return out
