package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalOperandLineAgreesWithServer: an operator written on a later
// line than its expression starts ('a'\n  .. v) is reported where it is,
// the line the server names too, not at the start of the first line or
// at another operator there.
func TestNilLocalOperandLineAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const warn = `scripts/x.lua:7:3: warning: concatenation (..) of v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths ("attempt to concatenate local 'v' (a nil value)"); give it a value on every path, or test it first (if v then ... end)`
	for _, tc := range []struct{ name, expr string }{
		{"alone on its line", "'a'\n  .. v"},
		{"after another on the first line", "'a' .. 'b'\n  .. v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal v\nif ARGV[1] == 'y' then v = 'x' end\nlocal s = " + tc.expr + "\nredis.call('SET', KEYS[1], s)\n"
			checkAndRun(t, rc, src, warn, "user_script:7: attempt to concatenate local 'v' (a nil value)", []string{"{t}k"}, "n")
		})
	}
}
