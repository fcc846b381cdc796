package gen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyOnSomePathsAgreesWithServer: a local given a command's reply in
// a nested block (an if, an else, a loop) holds that reply after the block
// on the paths through it, and one given another value there holds the
// reply it held before on the paths that skip it: either may be false
// where it is used, and the server fails the script there. A local given
// a value on every path, or tested, or used where the block gave it a
// value, is taken without a warning; compared with nil, it is no reply,
// which never is: it may be nil on the other paths.
func TestReplyOnSomePathsAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		arg         = `scripts/x.lua:8:28: warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		concat      = `scripts/x.lua:8:30: warning: concatenation (..) of v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		refused     = "Lua redis lib command arguments must be strings or integers"
		concatFails = "attempt to concatenate local 'v' (a boolean value)"
	)
	get := "redis.call('GET', KEYS[1])"
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"given in an if, an argument", "local v = 'x'\nif ARGV[1] == '1' then v = " + get + " end\nredis.call('SET', KEYS[2], v)", arg, refused},
		{"given in an if, concatenated", "local v = 'x'\nif ARGV[1] == '1' then v = " + get + " end\nredis.call('SET', KEYS[2], v .. 'x')", concat, concatFails},
		{"given in an if, its else another value", "local v\nif ARGV[1] == '1' then v = " + get + " else v = 'x' end\nredis.call('SET', KEYS[2], v .. 'x')", concat, concatFails},
		{"given in a loop", "local v = 'x'\nfor i = 1, 2 do v = " + get + " end\nredis.call('SET', KEYS[2], v .. 'x')", concat, concatFails},
		{"kept on the paths that skip an if", "local v = " + get + "\nif ARGV[1] == '2' then v = 'x' end\nredis.call('SET', KEYS[2], v .. 'x')", concat, concatFails},
		{"another value on every path", "local v = " + get + "\nif ARGV[1] == '1' then v = 'x' else v = 'y' end\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
		// Blocks that always run give it the value on every path.
		{"another value in a do block", "local v = " + get + "\ndo v = 'x' end\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
		{"another value in a repeat", "local v = " + get + "\nrepeat v = 'x' until true\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
		{"another value in a while true left by a break", "local v = " + get + "\nwhile true do v = 'x'; break end\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
		{"another value in a repeat a break may leave first", "local v = " + get + "\nrepeat if ARGV[1] == '1' then break end; v = 'x' until true\nredis.call('SET', KEYS[2], v .. 'x')", concat, concatFails},
		{"another value, used in the block", "local v = " + get + "\nif ARGV[1] == '1' then v = 'x'; redis.call('SET', KEYS[2], v .. 'x') end", "", ""},
		{"another value where it is false", "local v = " + get + "\nif not v then v = 'x' end\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
		{"tested", "local v = 'x'\nif ARGV[1] == '1' then v = " + get + " end\nif v then redis.call('SET', KEYS[2], v .. 'x') end", "", ""},
		// Compared with nil: it may be nil on the other paths, so the
		// comparison is no reply's, which would always be false.
		{"given in an if, compared with nil", "local v = cjson.decode('{}').a\nif ARGV[1] == '2' then v = " + get + " end\nif v == nil then return end\nredis.call('SET', KEYS[2], tostring(v))", "", ""},
		{"given nil in an if, compared with nil", "local v = " + get + "\nif ARGV[1] == '1' then v = nil end\nif v == nil then return end\nredis.call('SET', KEYS[2], tostring(v))", "", ""},
		{"given in a function", "local v = 'x'\nlocal function f() v = " + get + " end\nredis.call('SET', KEYS[2], v .. 'x')", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @arg a string\n-- @return none\nredis.call('ECHO', ARGV[1])\n" + tc.body + "\n"
			want := tc.want
			if want != "" {
				// The use is on the script's last line.
				want = strings.Replace(want, ":8:", ":"+strconv.Itoa(strings.Count(src, "\n"))+":", 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}missing", "{t}k2"}, "1")
		})
	}
}
