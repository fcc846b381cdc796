package gen

import (
	"context"
	"fmt"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicOperandOnPathsAgreesWithServer: an operand of arithmetic or
// a concatenation that is KEYS[n] or ARGV[n] past the fixed ones on some
// paths only (a local given it in an if, a parameter a call passes it, a
// local function's return) is nil there when the list is short, and Lua
// fails the script ("attempt to concatenate a nil value") after its
// earlier writes: the generated callers must refuse such a list, as for
// the element written in place. Not when the script tests the value first.
func TestVariadicOperandOnPathsAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	const set = "redis.call('EXISTS', KEYS[1] .. ':m') == 1" // true on every run here
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"a local given it in an if", "local v = 'x'\nif " + set + " then v = ARGV[3] end\nredis.call('SET', KEYS[1], v .. ':s')", "if len(rest) < 2 {"},
		{"a parameter", "local function f(v) redis.call('SET', KEYS[1], v .. ':s') end\nf(ARGV[3])", "if len(rest) < 2 {"},
		{"a parameter in arithmetic", "local function f(v) return v + 1 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "if len(rest) < 2 {"},
		{"a function's return", "local function f() return ARGV[3] end\nredis.call('SET', KEYS[1], f() .. ':s')", "if len(rest) < 2 {"},
		{"a local given a function's return", "local function f() return ARGV[3] end\nlocal v = f()\nredis.call('SET', KEYS[1], v + 1)", "if len(rest) < 2 {"},
		{"a local tested first", "local v = 'x'\nif " + set + " then v = ARGV[3] end\nif v then redis.call('SET', KEYS[1], v .. ':s') end", ""},
		{"a parameter tested first", "local function f(v) if v then redis.call('SET', KEYS[1], v .. ':s') end end\nf(ARGV[3])", ""},
		{"a parameter given a default", "local function f(v) redis.call('SET', KEYS[1], v .. ':s') end\nf(ARGV[3] or 'z')", ""},
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

// TestVariadicOperandOnPathsAgainstCap: such an operand needs the element
// on its paths only: against a command every run makes that takes fewer
// values of the list (GETSET of unpack(ARGV, 2): one), it is warned of as a
// path that never succeeds, not refused as a script no count runs.
func TestVariadicOperandOnPathsAgainstCap(t *testing.T) {
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\nredis.call('GETSET', KEYS[1], unpack(ARGV, 2))\n"
	const tail = " needs 2 values of rest at least, but GETSET (line 6), which every run makes, takes 1 at most: where the script makes line %d, Redis refuses one of them whatever the count (wrong number of arguments), after the script's earlier writes; the generated callers check the count for line 6"
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"a local given it in an if", "local v = 'x'\nif redis.call('GET', KEYS[1]) == 'y' then v = ARGV[3] end\nredis.call('SET', KEYS[1], v .. ':s')",
			"scripts/x.lua:9:30: warning: v (ARGV[3]) in .. (line 9)" + fmt.Sprintf(tail, 9)},
		{"a function's return", "local function f() return ARGV[3] end\nredis.call('SET', KEYS[1], f() .. ':s')",
			"scripts/x.lua:8:32: warning: f() (ARGV[3]) in .. (line 8)" + fmt.Sprintf(tail, 8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkWarnings(t, head+tc.body+"\n", []string{tc.want})
		})
	}
}
