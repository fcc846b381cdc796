-- @key lock     lock:{name}
-- @key channel  channel:{name}
-- @arg owner string
-- @return int64
local lock = KEYS[1]
redis.call('set', lock .. ':' .. ARGV[1], 1)
for _, k in ipairs(KEYS) do
  redis.call('pexpire', k, 100)
end
return redis.call('zunionstore', KEYS[1], 1, tostring(KEYS[2]))
