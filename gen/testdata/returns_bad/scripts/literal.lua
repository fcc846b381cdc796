-- @key k
-- @return int64
if redis.call('exists', KEYS[1]) == 1 then
  return 'done'
end
if redis.call('ttl', KEYS[1]) == -1 then
  return nil
end
return {1, 2}
