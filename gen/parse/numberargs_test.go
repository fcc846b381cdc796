package parse

import (
	"slices"
	"testing"
)

// NumberArgs lists the arguments Lua reads as numbers (doubles), and only
// those: a string passed on keeps its digits.
func TestNumberArgs(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []int
	}{
		{"return tonumber(ARGV[1])", []int{1}},
		{"local n = ARGV[2]\nreturn tonumber(n)", []int{2}},
		{"return ARGV[1] + 1", []int{1}},
		{"return -ARGV[3]", []int{3}},
		{"for i = ARGV[1], ARGV[2] do end", []int{1, 2}},
		{"return math.max(ARGV[1], 0)", []int{1}},
		{"return string.format('%s:%d', ARGV[1], ARGV[2])", []int{2}},
		{"for i = 1, #ARGV do local v = tonumber(ARGV[i]) end", []int{0}},
		{"return tonumber(ARGV[1], 10)", []int{1}},
		{"return bit.band(ARGV[1], 255)", []int{1}},
		{"return struct.pack('>d', ARGV[2])", []int{2}},
		{"return redis.call('INCRBY', KEYS[1], ARGV[1])", nil},
		{"return ARGV[1] .. ':' .. tostring(ARGV[2])", nil},
		{"return ARGV[1] < ARGV[2]", nil},
	} {
		f, errs := Parse("x.lua", []byte(tc.src))
		if len(errs) > 0 {
			t.Fatalf("%q: %v", tc.src, errs)
		}
		got := slices.Compact(slices.Sorted(slices.Values(f.NumberArgs)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: NumberArgs %v, want %v", tc.src, got, tc.want)
		}
	}
}
