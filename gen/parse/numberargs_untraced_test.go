package parse

import (
	"slices"
	"testing"
)

// An argument read as a number where the walker cannot tell which one it is
// (ARGV held in a local or passed on, its values moved by table.remove,
// select, tonumber through pcall, cjson.decode) is recorded as 0, which
// makes the callers refuse every int64 beyond ±2^53: Lua would go on with
// other digits.
func TestNumberArgsUntraced(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []int
	}{
		{"local args = ARGV\nreturn args[1] + 1", []int{0}},
		{"local function f(a) return tonumber(a[2]) end\nreturn f(ARGV)", []int{0}},
		{"local first = table.remove(ARGV, 1)\nreturn tonumber(ARGV[1])", []int{0, 1}},
		{"local x = select(2, unpack(ARGV))\nreturn x * 2", []int{0}},
		{"local ok, n = pcall(tonumber, ARGV[2])\nreturn n", []int{2}},
		{"return cjson.decode(ARGV[1])", []int{1}},
		{"local args = ARGV\nreturn redis.call('INCRBY', KEYS[1], args[1])", nil},
		{"return select('#', unpack(ARGV)) + 1", nil},
		{"return #ARGV + 1", nil},
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
