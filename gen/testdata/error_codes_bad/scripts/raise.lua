-- @key k
-- @return int64
-- @error OUT_OF_STOCK nothing left
if redis.call('get', KEYS[1]) == '0' then
  error('OUT_OF_STOCK nothing left')
end
return redis.call('decr', KEYS[1])
