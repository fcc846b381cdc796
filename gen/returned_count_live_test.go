package gen

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedCountAgreesWithServer: a call of a local function written
// last in redis.call passes every value the function returns: when each
// path returns the same number of values, the command gets that many
// there, and a command that takes another count is refused, as when the
// values are written in place; Redis fails it at run time ("Wrong number
// of args"). A function whose paths return different counts, or one that
// may end without a return, is not counted.
func TestReturnedCountAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		want       []string // nil: accepted, and the server runs it
	}{
		{"two values for GET", "local function f() return KEYS[1], 'x' end\nredis.call('GET', f())",
			[]string{"scripts/x.lua:5:12: wrong number of arguments for GET: it takes 1 argument, the call passes 2"}},
		{"one value for SET", "local function f() return KEYS[1] end\nredis.call('SET', f())",
			[]string{"scripts/x.lua:5:12: wrong number of arguments for SET: it takes at least 2 arguments, the call passes 1"}},
		{"two on each path", "local function f(c) if c then return KEYS[1], 'x' end return KEYS[1], 'y' end\nredis.call('GET', f(true))",
			[]string{"scripts/x.lua:5:12: wrong number of arguments for GET: it takes 1 argument, the call passes 2"}},
		{"the count SET takes", "local function f() return KEYS[1], 'v' end\nredis.call('SET', f())", nil},
		{"a function's return in a function", "local function f() local g = function() return 1, 2 end return KEYS[1] end\nredis.call('GET', f())", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, nil, "wrong number of arg")
			if refused != (tc.want != nil) {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
