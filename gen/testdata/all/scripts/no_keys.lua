-- @arg type string
-- @return map[string]string?
-- @retryable
return {ARGV[1], "x"}
