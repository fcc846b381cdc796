-- WrongType replies with the shape named by kind, whatever it declares.
-- @arg kind string   string, nil, array or int
-- @return int64
local replies = {string = "abc", array = {1, 2}, int = 7}
-- A table lookup: the checker does not follow it, so the wrong shapes pass.
return replies[ARGV[1]]
