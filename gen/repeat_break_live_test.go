package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRepeatUntilNeverBreakAgreesWithServer: repeat ... until nil (or
// false) never ends by its condition, so it is left only by a break or a
// return, as while true is: a local holds after it the values it was given
// at each break. Given a string at every break it is taken, and the server
// runs the script; given nil at a break it is warned of, and the server
// refuses the call.
func TestRepeatUntilNeverBreakAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const refused = "Lua redis lib command arguments must be strings or integers"
	for _, cond := range []string{"nil", "false"} {
		for _, tc := range []struct {
			name, body, want, server string // server: part of Redis's error, "" for none
		}{
			{"tested, then break", "local x\nrepeat\nx = redis.call('GET', KEYS[1]) or 'a'\nif x then break end\nuntil " + cond + "\nredis.call('SET', KEYS[1], x)", "", ""},
			{"given at the break", "local x\nrepeat\nx = 'a'\nbreak\nuntil " + cond + "\nredis.call('SET', KEYS[1], x)", "", ""},
			{"a reply replaced at the break", "local x = redis.call('GET', KEYS[1])\nrepeat\nx = 'a'\nbreak\nuntil " + cond + "\nredis.call('SET', KEYS[1], x .. 'y')", "", ""},
			{"nil at a break", "local x = 'a'\nrepeat\nif KEYS[1] then x = nil break end\nx = 'b'\nbreak\nuntil " + cond + "\nredis.call('SET', KEYS[1], x)",
				`scripts/x.lua:9:28: warning: argument 2 of redis.call is x, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if x then ... end)`, refused},
		} {
			t.Run(cond+", "+tc.name, func(t *testing.T) {
				src := "-- @key k\n-- @return none\n" + tc.body + "\n"
				checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"})
			})
		}
	}
}
