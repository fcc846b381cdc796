#!lua flags=allow-oom
-- RwCancel withdraws a waiting writer that gave up. When no writer is left
-- waiting, "1" is published so readers it held back enter at once: a
-- registration whose deadline (server time) has passed, a writer that died,
-- holds no reader back and is removed first. It is published only while
-- readers can enter (the lock free or held for reading): while a writer
-- holds the lock, the writer that gave up held no reader back (that
-- writer's release tells them), and "1" would wake every waiter, Go's and
-- Redisson's, for nothing.
-- A repeat (the attempt before it may have failed at its publish, after its
-- writes: a refused SPUBLISH, made again with PUBLISH) finds the writer gone
-- and publishes all the same when no writer is left waiting, under the same
-- condition: a writer may hold the lock by then (its first attempt
-- published, and a writer took the lock since).
-- Reply true when the writer was registered.
-- @key    lock
-- @key    writers        redisson_rwlock_writers:{name}
-- @key    channel        redisson_rwlock:{name}
-- @arg    writeOwner     string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @arg    repeat         bool       an earlier attempt of this withdrawal may have run
-- @return bool
-- @retryable
-- @commands publish spublish
local registered = redis.call('zrem', KEYS[2], ARGV[1]) == 1
if not registered and ARGV[3] ~= '1' then
  return 0
end
local t = redis.call('time')
redis.call('zremrangebyscore', KEYS[2], '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
-- readersMayEnter: the lock is free or held for reading. Another kind of
-- lock may hold the name by then, the lock freed since the writer queued
-- (a string, whose key HGET would refuse: read with PCALL; or a hash
-- without a mode): no reader enters there.
local function readersMayEnter()
  local mode = redis.pcall('hget', KEYS[1], 'mode')
  return mode == 'read' or (mode == false and redis.call('exists', KEYS[1]) == 0)
end
if redis.call('zcard', KEYS[2]) == 0 and readersMayEnter() then
  redis.call(ARGV[2], KEYS[3], '1')
end
if not registered then
  return 0
end
return 1
