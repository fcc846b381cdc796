package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnreachedCallerAgreesWithServer: a call written in a local function
// the script never runs passes nothing: the element it would pass a
// function the script does call (g(ARGV[3]) in such a function, g's
// parameter given to redis.call, read in arithmetic or given to tonumber
// there) binds no caller's list, and the server runs a short one. A call
// that runs still binds them, and the server fails that list.
func TestUnreachedCallerAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	for _, tc := range []struct {
		name, body, marker string
		check              string // the generated caller's test, "" for none
	}{
		{"passed to redis.call", "local function g(x) redis.call('SET', KEYS[1], x) end\ng('a')\nlocal function f() g(ARGV[3]) end", "must be strings or integers", ""},
		{"arithmetic", "local function g(x) return x + 1 end\nredis.call('SET', KEYS[1], g(1))\nlocal function f() return g(ARGV[3]) end", "arithmetic on", ""},
		{"tonumber", "local function g(x) redis.call('SET', KEYS[1], tonumber(x)) end\ng('1')\nlocal function f() g(ARGV[3]) end", "must be strings or integers", ""},
		{"by a call that runs", "local function g(x) redis.call('SET', KEYS[1], x) end\ng('a')\nlocal function f() g(ARGV[3]) end\nf()", "must be strings or integers", "if len(rest) < 2 {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, tc.marker)
			if refused != (tc.check != "") {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
