-- @key k
-- @return int64
-- @error OUT_OF_STOCK nothing left
-- @error NOT_COUNTER the key holds something else
if redis.call('type', KEYS[1]).ok ~= 'string' then
  return {err = 'NOT_COUNTER ' .. KEYS[1]}
end
if tonumber(redis.call('get', KEYS[1])) <= 0 then
  return redis.error_reply('OUT_OF_STOCK nothing left')
end
return redis.call('decr', KEYS[1])
