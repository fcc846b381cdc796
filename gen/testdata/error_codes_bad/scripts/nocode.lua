-- @key k
-- @return int64
if redis.call('exists', KEYS[1]) == 0 then
  return redis.error_reply('no such counter')
end
return redis.call('incr', KEYS[1])
