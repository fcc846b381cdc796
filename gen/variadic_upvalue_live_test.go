package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicUpvalueAgreesWithServer: a local given KEYS[n] or ARGV[n]
// past the fixed ones (local v = ARGV[3]) that a local function reads from
// the enclosing chunk, as an argument of redis.call or an operand of a
// concatenation, is nil there when the list is short, and Redis or Lua
// fails the script after its earlier writes: the generated callers must
// refuse such a list, as for the local read where it is declared. Not when
// the script tests the local (if v then f() end, v and f()), nor when it is
// given another value somewhere.
func TestVariadicUpvalueAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"an argument", "local v = ARGV[3]\nlocal function f() redis.call('SET', KEYS[1], v) end\nf()", "if len(rest) < 2 {"},
		{"an operand", "local v = ARGV[3]\nlocal function f() return v .. ':x' end\nredis.call('SET', KEYS[1], f())", "if len(rest) < 2 {"},
		{"tested around the call", "local v = ARGV[3]\nlocal function f() redis.call('SET', KEYS[1], v) end\nif v then f() end", ""},
		{"tested in an and", "local v = ARGV[3]\nlocal function f() redis.call('SET', KEYS[1], v) end\nlocal _ = v and f()", ""},
		{"tested with not", "local v = ARGV[3]\nlocal function f() redis.call('SET', KEYS[1], v) end\nlocal missing = not v\nif missing then return end\nf()", ""},
		{"given a default", "local v = ARGV[3]\nlocal function f() redis.call('SET', KEYS[1], v) end\nv = v or 'z'\nf()", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "script")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a", "5"}, "script"); refused {
				t.Errorf("a list of two: the server returned %v", err)
			}
		})
	}
}
