-- NoKeys pairs its argument with "x", or replies nil for an empty one.
-- @arg type string
-- @return map[string]string?
-- @retryable
if ARGV[1] == "" then return nil end
return {ARGV[1], "x"}
