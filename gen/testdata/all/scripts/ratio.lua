-- Ratio divides a by b as Lua does: 0 / 0 is NaN, which the C library
-- writes as -nan (or nan), and 1 / 0 is inf.
-- @arg    a  float64
-- @arg    b  float64
-- @return float64
return string.format("%.17g", ARGV[1] / ARGV[2])
