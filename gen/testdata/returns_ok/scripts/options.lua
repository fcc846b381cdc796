-- SET answers nil only with NX, XX or GET.
-- @key k
-- @arg v string
-- @return string
return redis.call('set', KEYS[1], ARGV[1], 'PX', 1000)
