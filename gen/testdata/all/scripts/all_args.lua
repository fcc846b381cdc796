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
-- @return none
-- @readonly
-- @retryable
redis.call("GET", KEYS[1])
redis.call("GET", KEYS[2])
return redis.status_reply(ARGV[1] .. ARGV[2] .. ARGV[3] .. ARGV[4] .. ARGV[5] .. ARGV[6] .. ARGV[7] .. ARGV[#ARGV])
