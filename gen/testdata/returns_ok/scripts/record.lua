-- Trailing nils are dropped by Lua, so a shorter array is fine.
-- @key k
-- @return {status int64, ttl int64?}
if redis.call('exists', KEYS[1]) == 0 then
  return {0}
end
return {1, redis.call('pttl', KEYS[1])}
