package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTonumberParamAgreesWithServer: tonumber of a parameter of a local
// function that a call passes ARGV[n] past the fixed arguments is nil for a
// list too short to hold it, as tonumber(ARGV[n]) is: read as an operand
// of arithmetic, in place or held by a local, Lua fails the script there
// ("attempt to perform arithmetic on a nil value") after its earlier
// writes, so the generated callers must refuse such a list. Not when the
// function tests the parameter or the local first.
func TestTonumberParamAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"in place", "local function f(x) return tonumber(x) * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "if len(rest) < 2 {"},
		{"held by a local", "local function f(x) local n = tonumber(x) return n * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "if len(rest) < 2 {"},
		{"negated", "local function f(x) local n = tonumber(x) return -n end\nredis.call('SET', KEYS[1], f(ARGV[2]))", "if len(rest) == 0 {"},
		{"the parameter tested", "local function f(x) if not x then return 0 end return tonumber(x) * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", ""},
		{"the local tested", "local function f(x) local n = tonumber(x) if not n then return 0 end return n * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", ""},
		{"the local given another value", "local function f(x) local n = tonumber(x) n = 1 return n * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, "arithmetic on")
			if refused != (tc.check != "") {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}

// TestTonumberParamArgAgreesWithServer: tonumber of such a parameter passed
// to redis.call, in place or held by a local, gives Redis nil for a list too
// short to hold the element, which it refuses ("Lua redis lib command
// arguments must be strings or integers") after the script's earlier
// writes: the generated callers must refuse that list, as for
// tonumber(ARGV[n]) in place. Not when the function tests the parameter.
func TestTonumberParamArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"in place", "local function f(x) redis.call('SET', KEYS[1], tonumber(x)) end\nf(ARGV[3])", "if len(rest) < 2 {"},
		{"held by a local", "local function f(x) local n = tonumber(x) redis.call('SET', KEYS[1], n) end\nf(ARGV[3])", "if len(rest) < 2 {"},
		{"the parameter tested", "local function f(x) if not x then return end redis.call('SET', KEYS[1], tonumber(x)) end\nf(ARGV[3])", ""},
		{"the local tested", "local function f(x) local n = tonumber(x) if n then redis.call('SET', KEYS[1], n) end end\nf(ARGV[3])", ""},
		{"a default", "local function f(x) redis.call('SET', KEYS[1], tonumber(x) or 0) end\nf(ARGV[3])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
