-- Every argument type, and a record reply.
-- @key k
-- @arg s string
-- @arg b bytes
-- @arg i int64
-- @arg f float64
-- @arg ok bool
-- @arg d duration
-- @arg t time
-- @return {i int64, s string?, f float64?}
redis.call('hset', KEYS[1], 's', ARGV[1], 'b', ARGV[2], 'ok', ARGV[5], 't', ARGV[7])
redis.call('pexpire', KEYS[1], ARGV[6])
return {tonumber(ARGV[3]), redis.call('hget', KEYS[1], 's'), tostring(ARGV[4])}
