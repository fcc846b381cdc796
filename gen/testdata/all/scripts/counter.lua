-- @key k
-- @arg by int64
-- @return int64
-- @error NOT_OWNER the lock is held by another owner
return redis.call("INCRBY", KEYS[1], ARGV[1])
