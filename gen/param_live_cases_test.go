package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The server's refusal of a nil or false command argument, and the
// checker's warnings of a parameter, or a local given one, that a call of
// its function passes nil.
const (
	refusedArg   = "Lua redis lib command arguments must be strings or integers"
	warnParamNil = `warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
	warnGivenNil = `warning: argument 2 of redis.call is y, a local given the parameter v, which a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if y then ... end)`
)

// liveCase is a script's body, what the checker must say of it ("" for
// nothing) and part of the error Redis answers running it ("" for none).
type liveCase struct{ name, body, want, server string }

// checkLiveCases checks each case's script, head + body + tail, and runs it
// on a server of the test's own with keys and args (checkAndRun).
func checkLiveCases(t *testing.T, head, tail string, keys, args []string, cases []liveCase) {
	t.Helper()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body+tail, tc.want, tc.server, keys, args...)
		})
	}
}
