-- @key channel  channel:{name}
-- @arg publish string  "publish", or "spublish" for sharded channels
-- @commands publish spublish
-- @return int64
return redis.call(ARGV[1], KEYS[1] .. ':waiter', 'hello')
