-- PushTail counts the call in log, then pushes the items after the first (a
-- header it leaves out) onto list: it needs two items at least, as RPUSH
-- takes one value at least.
-- @key log
-- @key list
-- @arg items... string
-- @return int64
redis.call('INCR', KEYS[1])
return redis.call('RPUSH', KEYS[2], unpack(ARGV, 2))
