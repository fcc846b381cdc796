-- FairOtherQueue reports whether the fair-queue protocol a FairMutex handle
-- does not use has waiters on the same name: Redisson's RFairLock queue for
-- a handle with our own queue, or ours for a handle in Redisson's mode. The
-- two queues do not order each other's waiters, so such a mix is logged.
-- @key    queue          the other protocol's queue list
-- @return bool
-- @readonly
return redis.call('exists', KEYS[1])
