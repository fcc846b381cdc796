-- @key k
-- @return map[string]string
-- @error NOT_OWNER the lock is held by another owner
return redis.call("HGETALL", KEYS[1])
