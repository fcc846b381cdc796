-- @key k
-- @return int64?
if redis.call('exists', KEYS[1]) == 0 then
  return nil
end
if redis.call('type', KEYS[1]).ok ~= 'string' then
  return redis.call('hlen', KEYS[1])
end
local v = redis.call('get', KEYS[1])
return tonumber(v)
