package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestAndLocalGuardAgreesWithServer: the right of v and ... (or of not v or
// ..., in an expression or a condition) runs only where the local v holds
// a value, so a local that may hold nil elsewhere is taken there without a
// warning, and the server runs the script. Right of v or ..., or past the
// and of v and ... or ..., it runs where v is nil: still warned of, and
// the server refuses the call there.
func TestAndLocalGuardAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:6:%d: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
	)
	for _, tc := range []struct {
		name, use, want, server string // want: %d is the column of v
	}{
		{"right of an and", "local x = v and redis.call('SET', KEYS[1], v)", "", ""},
		{"right of not v or", "local x = not v or redis.call('SET', KEYS[1], v)", "", ""},
		{"right of an and in a condition", "if v and redis.call('SET', KEYS[1], v).ok then redis.call('DEL', KEYS[1]) end", "", ""},
		{"right of not v or in a condition", "if not v or redis.call('SET', KEYS[1], v).ok then redis.call('DEL', KEYS[1]) end", "", ""},
		{"right of an or", "local x = v or redis.call('SET', KEYS[1], v)", "43", refused},
		{"past the and of an and/or", "local x = v and 'y' or redis.call('SET', KEYS[1], v)", "51", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal v\nif ARGV[1] == '2' then v = 'x' end\n" + tc.use + "\n"
			want := ""
			if tc.want != "" {
				want = strings.Replace(warn, "%d", tc.want, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "1")
		})
	}
}
