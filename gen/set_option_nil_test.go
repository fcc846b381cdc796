package gen

import (
	"strings"
	"testing"
)

// TestSetOptionNotLiteral: SET whose option the checker cannot read (an
// argument, a local, an and/or of NX and XX) may be NX, XX or GET, and then
// replies nil (false in Lua) when it sets nothing: testing its reply for
// false is no always-true test.
func TestSetOptionNotLiteral(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"option from an argument", "-- @key k\n-- @arg v string\n-- @arg mode string\n-- @return bool\nreturn redis.call('SET', KEYS[1], ARGV[1], ARGV[2]) ~= false\n"},
		{"option in a local", "-- @key k\n-- @return bool\nlocal m = 'NX'\nreturn redis.call('SET', KEYS[1], 'v', m) ~= false\n"},
		{"option chosen by a bool", "-- @key k\n-- @arg nx bool\n-- @return int64\nlocal mode = ARGV[1] == '1' and 'NX' or 'XX'\nif not redis.call('SET', KEYS[1], 'v', mode) then return 0 end\nreturn 1\n"},
		{"option after an expiry", "-- @key k\n-- @arg ttl duration\n-- @arg mode string\n-- @return bool\nreturn redis.call('SET', KEYS[1], 'v', 'PX', ARGV[1], ARGV[2]) ~= false\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if lines := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)}); len(lines) != 0 {
				t.Errorf("refused a valid script:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
	// An argument that is an expiry's value is no option: SET replies OK.
	got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte("-- @key k\n-- @arg ttl duration\n-- @return int64\nif not redis.call('SET', KEYS[1], 'v', 'PX', ARGV[1]) then return 0 end\nreturn 1\n")})
	if len(got) != 1 || !strings.Contains(got[0], "is always false") {
		t.Errorf("SET k v PX ARGV[1] tested with not: got %q, want it refused as always false", got)
	}
}
