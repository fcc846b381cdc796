-- Touch sets k to v with a lease.
-- @key k
-- @arg v string
-- @arg lease duration
-- @return none
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return redis.status_reply("OK")
