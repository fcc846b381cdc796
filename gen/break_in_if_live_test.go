package gen

import (
	"strconv"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGivenInIfAtBreakAgreesWithServer: a loop left only by a break
// (while true, repeat ... until nil) where a local is given a value in
// the if that holds a break, before it (if c then x = 'a' break end),
// leaves the local holding that value on that path. Given a value at
// every break, in such ifs or before them, it is taken, and the server
// runs the script; given nil before a break in one, or given a value only
// after the break, it is warned of, and the server refuses the call.
func TestGivenInIfAtBreakAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const refused = "Lua redis lib command arguments must be strings or integers"
	warn := func(line int) string {
		return "scripts/x.lua:" + strconv.Itoa(line) + `:28: warning: argument 2 of redis.call is x, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if x then ... end)`
	}
	for _, loop := range []struct{ open, close string }{{"while true do", "end"}, {"repeat", "until nil"}} {
		for _, tc := range []struct {
			name, body, want, server string // server: part of Redis's error, "" for none
		}{
			{"given in the if, then at the last break", "if ARGV[1] == 'a' then x = 'a' break end\nx = 'b'\nbreak", "", ""},
			{"given in each branch", "if ARGV[1] == 'a' then x = 'a' break else x = 'b' break end", "", ""},
			{"given in a nested if", "if ARGV[1] ~= '' then if ARGV[1] == 'a' then x = 'a' break end end\nx = 'b'\nbreak", "", ""},
			{"given in an elseif", "if ARGV[1] == 'q' then x = 'q' break elseif ARGV[1] == 'a' then x = 'a' break end\nx = 'b'\nbreak", "", ""},
			{"given before the if", "x = 'c'\nif ARGV[1] == 'a' then x = x .. 'a' break end\nbreak", "", ""},
			{"tested in a nested if", "x = redis.call('GET', KEYS[1])\nif ARGV[1] == 'a' then if x then break end end\nx = 'b'\nbreak", "", ""},
			{"given nil in the if", "if ARGV[1] == 'a' then x = nil break end\nx = 'b'\nbreak", warn(10), refused},
			{"given after the break", "if ARGV[1] == 'a' then break end\nx = 'b'\nbreak", warn(10), refused},
			{"given in one branch only", "if ARGV[1] == 'q' then x = 'a' break else break end", warn(8), refused},
		} {
			t.Run(loop.open+", "+tc.name, func(t *testing.T) {
				src := "-- @key k\n-- @arg a string\n-- @return none\nlocal x\n" + loop.open + "\n" + tc.body + "\n" + loop.close + "\nredis.call('SET', KEYS[1], x)\n"
				checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"}, "a")
			})
		}
	}
}
