-- Counts calls in a fixed key: works on a single node only.
-- @cluster-unsafe
-- @return int64
return redis.call('incr', 'calls')
