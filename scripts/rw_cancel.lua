#!lua flags=allow-oom
-- RwCancel withdraws a waiting writer that gave up. When no writer is left
-- waiting, "1" is published so readers it held back enter at once.
-- Reply true when the writer was registered.
-- @key    writers        redisson_rwlock_writers:{name}
-- @key    channel        redisson_rwlock:{name}
-- @arg    writeOwner     string
-- @arg    publish        string     "publish", or "spublish" for sharded channels
-- @return bool
-- @retryable
-- @commands publish spublish
if redis.call('zrem', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('zcard', KEYS[1]) == 0 then
  redis.call(ARGV[2], KEYS[2], '1')
end
return 1
