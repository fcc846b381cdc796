package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalOperandAgreesWithServer: a local that holds nil or false on
// some paths (declared without a value, or given false, and given a value
// in an if only; given an and whose left is a comparison), untested, as an
// operand of a concatenation, of arithmetic or of #, fails the script on
// those paths: warned of, and the server fails the script there. One that
// holds nil or false on every path is refused. Tested first, given a
// default, or given a value on every path, it is taken, and the server
// runs the script.
func TestNilLocalOperandAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const may = `scripts/x.lua:6:%s, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths ("attempt to %s local 'v' (a %s value)"); give it a value on every path, or test it first (if v then ... end)`
	for _, tc := range []struct {
		name, decl, use, want, server string
	}{
		{"nil, concatenated", "local v", "local s = 'p' .. v", "15: warning: concatenation (..) of v|concatenate|nil", "attempt to concatenate local 'v' (a nil value)"},
		{"false, concatenated", "local v = false", "local s = v .. 'p'", "13: warning: concatenation (..) of v|concatenate|boolean", "attempt to concatenate local 'v' (a boolean value)"},
		{"nil, in arithmetic", "local v", "local s = v + 1", "13: warning: arithmetic (+) on v|perform arithmetic on|nil", "attempt to perform arithmetic on local 'v' (a nil value)"},
		{"nil, its length", "local v", "local s = #v", "11: warning: # of v|get length of|nil", "attempt to get length of local 'v' (a nil value)"},
		{"tested", "local v", "if v then redis.call('SET', KEYS[1], 'p' .. v) end", "", ""},
		{"tested first", "local v", "if not v then return end\nlocal s = 'p' .. v", "", ""},
		{"given a default", "local v", "v = v or ''\nlocal s = 'p' .. v", "", ""},
		{"given a value on every path", "local v", "if not v then v = 'z' end\nlocal s = 'p' .. v", "", ""},
		{"on the right of an and", "local v", "local s = v and 'p' .. v", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.decl + "\nif ARGV[1] == 'y' then v = 'x' end\n" + tc.use + "\nredis.call('SET', KEYS[1], ARGV[1])\n"
			want := ""
			if tc.want != "" {
				parts := strings.Split(tc.want, "|")
				want = strings.NewReplacer("%s, a", parts[0]+", a", "to %s", "to "+parts[1], "a %s value", "a "+parts[2]+" value").Replace(may)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "n")
		})
	}
}

// TestNilLocalOperandAlwaysAgreesWithServer: a local that holds nil (or
// false) on every path, as an operand of a concatenation, is refused: the
// server fails the script.
func TestNilLocalOperandAlwaysAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range []struct{ decl, what string }{{"local v", "nil"}, {"local v = false", "false"}} {
		src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.decl + "\nredis.call('SET', KEYS[1], ARGV[1] .. v)\n"
		lua := map[string]string{"nil": "nil", "false": "boolean"}[tc.what]
		want := `scripts/x.lua:5:36: concatenation (..) of v, which holds ` + tc.what + ` there: Lua fails the script at run time ("attempt to concatenate local 'v' (a ` + lua + ` value)")`
		checkAndRun(t, rc, src, want, "attempt to concatenate local 'v' (a "+lua+" value)", []string{"{t}k"}, "n")
	}
}
