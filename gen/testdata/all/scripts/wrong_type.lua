-- WrongType replies with the shape named by kind, whatever it declares.
-- @arg kind string   string, nil, array or int
-- @return int64
if ARGV[1] == "string" then return "abc" end
if ARGV[1] == "nil" then return nil end
if ARGV[1] == "array" then return {1, 2} end
return 7
