package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnreachedFunctionAgreesWithServer: a local function the script never
// reads (nor one only such a function calls, nor one written in one) never
// runs: what its calls or arithmetic need of a variadic list (ARGV[3], an
// even count for HSET) binds no caller, and the server runs a short list.
// A function the script calls still makes the callers refuse one, which the
// server fails.
func TestUnreachedFunctionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"a local function", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end", ""},
		{"a local given a function", "local f = function() redis.call('SET', KEYS[1], ARGV[3]) end", ""},
		{"HSET of the rest", "local function f() redis.call('HSET', KEYS[1], unpack(ARGV, 2)) end", ""},
		{"arithmetic", "local function f() return ARGV[3] + 1 end", ""},
		{"calling itself only", "local function f(n) if n > 0 then f(n - 1) end redis.call('SET', KEYS[1], ARGV[3]) end", ""},
		{"called by one never called", "local function g() redis.call('SET', KEYS[1], ARGV[3]) end\nlocal function f() g() end", ""},
		{"written in one never called", "local function f() local function g() redis.call('SET', KEYS[1], ARGV[3]) end g() end", ""},
		{"called", "local function f() redis.call('SET', KEYS[1], ARGV[3]) end\nf()", "if len(rest) < 2 {"},
		{"called by one called", "local function g() redis.call('SET', KEYS[1], ARGV[3]) end\nlocal function f() g() end\nf()", "if len(rest) < 2 {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out["x.lua.go"]), "&GroupError{") {
				t.Error("the caller refuses an odd count")
			}
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, "must be strings or integers")
			if refused != (tc.check != "") {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
