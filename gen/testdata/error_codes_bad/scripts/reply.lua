-- @key k
-- @return int64
-- @error OUT_OF_STOCK nothing left
if redis.call('exists', KEYS[1]) == 0 then
  return redis.error_reply('WRONG_KIND not a counter')
end
if redis.call('get', KEYS[1]) == '0' then
  return {err = 'EMPTY nothing left'}
end
return redis.call('decr', KEYS[1])
