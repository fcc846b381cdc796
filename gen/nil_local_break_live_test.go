package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalBreakAgreesWithServer: a branch that ends with a break
// leaves the loop, so the rest of the loop's body runs only on the other
// paths: after if not v then break end, or if c then v = 'x' else break
// end, v holds a value there, as after a return, and the server runs the
// script; as after a return, v == nil shows v not nil and no more: a
// reply it may hold is false there, still warned of. Past the loop the break's path goes on with v nil: still warned
// of, and the server fails the script.
func TestNilLocalBreakAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		failed      = "attempt to concatenate local 'v' (a nil value)"
		falseFailed = "attempt to concatenate local 'v' (a boolean value)"
		falseWarn   = `scripts/x.lua:9:34: warning: concatenation (..) of v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		warn        = `scripts/x.lua:10:32: warning: concatenation (..) of v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths ("attempt to concatenate local 'v' (a nil value)"); give it a value on every path, or test it first (if v then ... end)`
	)
	for _, tc := range []struct {
		name, body, want, server string
	}{
		{"tested, then a break", "for i = 1, 2 do\n  if ARGV[1] == 'y' then v = 'x' end\n  if not v then break end\n  redis.call('SET', KEYS[1], 'p' .. v)\nend", "", ""},
		{"given, else a break", "for i = 1, 2 do\n  if ARGV[1] == 'y' then v = 'x' else break end\n  redis.call('SET', KEYS[1], 'p' .. v)\nend", "", ""},
		{"a break, else given", "for i = 1, 2 do\n  if ARGV[1] ~= 'y' then break else v = 'x' end\n  redis.call('SET', KEYS[1], 'p' .. v)\nend", "", ""},
		{"a reply, given, else a break", "for i = 1, 2 do\n  v = redis.call('GET', KEYS[1])\n  if ARGV[1] ~= 'y' then v = 'x' else break end\n  redis.call('SET', KEYS[1], 'p' .. v)\nend", "", ""},
		{"a nil test, then a break", "for i = 1, 2 do\n  v = redis.call('GET', KEYS[1])\n  if ARGV[1] == 'y' then v = 'x' end\n  if v == nil then break end\n  redis.call('SET', KEYS[1], 'p' .. v)\nend", falseWarn, falseFailed},
		{"past the loop", "for i = 1, 2 do\n  if ARGV[1] == 'y' then v = 'x' end\n  if not v then break end\nend\n\nredis.call('SET', KEYS[1], 'p' .. v)", warn, failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal v\n" + tc.body + "\n"
			// (Each from a missing key: GET replies nil.)
			if err := rc.Do(context.Background(), rc.B().Del().Key("{t}k").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "n")
		})
	}
}
