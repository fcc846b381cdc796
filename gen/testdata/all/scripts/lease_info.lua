-- LeaseInfo reads a lock's remaining lease and owner.
--
-- The owner is nil when the lock is free.
-- @key lock
-- @arg field string
-- @return {ttl int64, owner string?, holds int64?, fenced bool, score float64?, raw bytes?}
-- @readonly
local owner = redis.call("HGET", KEYS[1], ARGV[1])
return {redis.call("PTTL", KEYS[1]), owner}
