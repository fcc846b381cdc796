-- RwReadLease reads, without changing anything, the longest remaining lease
-- of one reader's read holds from..to (lease keys
-- <rwprefix>:<field>:rwlock_timeout:<n>), for operators: Inspect reads the
-- first holds of each reader, this the further ones, a bounded range per call.
-- Reply: the longest PTTL in ms (-1: a key without expiry; -2: none of the
-- keys exists).
-- @key    rwprefix   {name}: a reader's read-hold lease keys are <rwprefix>:<field>:rwlock_timeout:<n>
-- @arg    field      string     the reader's field, <client-id>:<owner-id>
-- @arg    from       int64
-- @arg    to         int64
-- @return int64
-- @readonly
local lease = -2
for h = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  lease = math.max(lease, redis.call('pttl', KEYS[1] .. ':' .. ARGV[1] .. ':rwlock_timeout:' .. h))
end
return lease
