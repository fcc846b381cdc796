package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRepeatGivesAgreesWithServer: the body of a repeat runs once at
// least, and that of a do block once, so one that gives a local declared
// without a value a value on every path, with no break, leaves it holding
// one: taken, and the server runs the script. A break before the
// assignment, or an assignment on some paths only, leaves it nil on those:
// warned of, and the server refuses the call.
func TestRepeatGivesAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:%s:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
	)
	for _, tc := range []struct {
		name, body, line, server string // line: of the warning, "" for none
	}{
		{"a repeat", "repeat\n  v = (v or 0) + 1\nuntil v > 3", "", ""},
		{"a repeat giving it in an if with an else", "repeat\n  if ARGV[1] == 'n' then v = 'a' else v = 'b' end\nuntil true", "", ""},
		{"a do block", "do\n  v = 'x'\nend", "", ""},
		{"a repeat with a break first", "repeat\n  if ARGV[1] == 'n' then break end\n  v = 'x'\nuntil true", "9", refused},
		{"a repeat giving it in an if", "repeat\n  if ARGV[1] == 'y' then v = 'x' end\nuntil true", "8", refused},
		{"a repeat giving it nil", "repeat\n  v = 'x'\n  if ARGV[1] == 'n' then v = nil end\nuntil true", "9", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal v\n" + tc.body + "\nredis.call('SET', KEYS[1], v)\nredis.call('ECHO', ARGV[1])\n"
			want := ""
			if tc.line != "" {
				want = strings.Replace(warn, "%s", tc.line, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "n")
		})
	}
}
