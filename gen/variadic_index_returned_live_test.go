package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicIndexReturnedAgreesWithServer: KEYS[n] or ARGV[n] past the
// fixed ones that a local function returns (return ARGV[3], or a parameter
// a call passes it: f(ARGV[3]) of return v) is nil when the list is short,
// and Redis fails the command that gets the call's value after the script's
// earlier writes: the generated callers must refuse such a list, as for the
// element written in the command. Not when the function tests it first, nor
// when the script tests the value it got.
func TestVariadicIndexReturnedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"returned in place", "local function f() return ARGV[3] end\nredis.call('SET', KEYS[1], f())", "if len(rest) < 2 {"},
		{"returned on a path", "local function f(c) if c then return 'z' end return ARGV[3] end\nredis.call('SET', KEYS[1], f(false))", "if len(rest) < 2 {"},
		{"a parameter returned", "local function f(v) return v end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "if len(rest) < 2 {"},
		{"returned two calls deep", "local function g() return ARGV[3] end\nlocal function f() return g() end\nredis.call('SET', KEYS[1], f())", "if len(rest) < 2 {"},
		{"held by a local", "local function f() return ARGV[3] end\nlocal v = f()\nredis.call('SET', KEYS[1], v)", "if len(rest) < 2 {"},
		{"passed on to a function", "local function f() return ARGV[3] end\nlocal function g(v) redis.call('SET', KEYS[1], v) end\ng(f())", "if len(rest) < 2 {"},
		{"a count", "local function f() return ARGV[3] end\nredis.call('RPUSH', KEYS[1], 'a')\nredis.call('LPOP', KEYS[1], f())", "if len(rest) < 2 {"},
		{"tested in the function", "local function f() if ARGV[3] then return ARGV[3] end return 'z' end\nredis.call('SET', KEYS[1], f())", ""},
		{"the parameter tested", "local function f(v) if v then return v end return 'z' end\nredis.call('SET', KEYS[1], f(ARGV[3]))", ""},
		{"the value tested", "local function f() return ARGV[3] end\nlocal v = f()\nif v then redis.call('SET', KEYS[1], v) end", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}

// TestVariadicKeyReturnedAgreesWithServer: the like for a variadic key a
// local function returns, which the command gets in a key position.
func TestVariadicKeyReturnedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @key rest...\n-- @return none\nredis.call('SET', KEYS[1], 'm')\n"
	for _, tc := range []struct {
		name, body string
		check      string
	}{
		{"returned in place", "local function f() return KEYS[2] end\nredis.call('SET', f(), 'v')", "if len(rest) == 0 {"},
		{"a parameter returned", "local function f(k) return k end\nredis.call('SET', f(KEYS[2]), 'v')", "if len(rest) == 0 {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, nil, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("a list of none: the server returned %v", err)
			}
		})
	}
}
