package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestDeadBranchValueAgreesWithServer: what a branch no run takes (the
// body of if false or if nil, the else of if true) gives a local never
// happens: a local given nil there still holds the value it held before,
// and such correct scripts are taken, and the server runs them. The same
// given in a live branch beside a dead one (an elseif false after it) is
// still warned of, and the server refuses the call or fails the script.
func TestDeadBranchValueAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- @key k\n-- @arg a string\n-- @return none\nlocal x = ARGV[1]\n"
		set     = "redis.call('SET', KEYS[1], x)\n"
		concat  = "redis.call('SET', KEYS[1], 'p' .. x)\n"
		refused = "Lua redis lib command arguments must be strings or integers"
		failed  = "attempt to concatenate local 'x' (a nil value)"
		warnSet = `scripts/x.lua:6:28: warning: argument 2 of redis.call is x, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if x then ... end)`
		warnCat = `scripts/x.lua:6:32: warning: concatenation (..) of x, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths ("attempt to concatenate local 'x' (a nil value)"); give it a value on every path, or test it first (if x then ... end)`
	)
	for _, tc := range []struct{ name, src, want, server string }{
		{"if false, then passed", "if false then x = nil end\n" + set, "", ""},
		{"if nil, then passed", "if nil then x = nil end\n" + set, "", ""},
		{"the else of if true, then passed", "if true then else x = nil end\n" + set, "", ""},
		{"if false, then concatenated", "if false then x = nil end\n" + concat, "", ""},
		{"a live branch beside an elseif false, passed", "if ARGV[1] == 'a' then x = nil elseif false then x = nil end\n" + set, warnSet, refused},
		{"a live branch beside an elseif false, concatenated", "if ARGV[1] == 'a' then x = nil elseif false then x = nil end\n" + concat, warnCat, failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
