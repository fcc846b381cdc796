package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTonumberParamTestedLaterAgreesWithServer: a local given tonumber of a
// parameter (local n = tonumber(x)) read where a test of the parameter made
// after it shows the parameter to hold a value (if x then ... end, after if
// not x then return end) is read only where the calls passed the element:
// a list too short to hold it never gets there, and the server runs it, so
// the generated callers must not refuse it. Where the test does not
// cover the read, they still must.
func TestTonumberParamTestedLaterAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	for _, tc := range []struct {
		name, body, marker string
		check              string // the generated caller's test, "" for none
	}{
		{"passed, in the if", "local function f(x) local n = tonumber(x) if x then redis.call('SET', KEYS[1], n) end end\nf(ARGV[3])", "must be strings or integers", ""},
		{"passed, after a return", "local function f(x) local n = tonumber(x) if not x then return end redis.call('SET', KEYS[1], n) end\nf(ARGV[3])", "must be strings or integers", ""},
		{"passed, ~= nil", "local function f(x) local n = tonumber(x) if x ~= nil then redis.call('SET', KEYS[1], n) end end\nf(ARGV[3])", "must be strings or integers", ""},
		{"arithmetic, in the if", "local function f(x) local n = tonumber(x) if x then return n * 2 end return 0 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "arithmetic on", ""},
		{"arithmetic, after a return", "local function f(x) local n = tonumber(x) if not x then return 0 end return n * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "arithmetic on", ""},
		{"passed, after the if", "local function f(x) local n = tonumber(x) if x then redis.call('DEL', KEYS[1]) end redis.call('SET', KEYS[1], n) end\nf(ARGV[3])", "must be strings or integers", "if len(rest) < 2 {"},
		{"arithmetic, after the if", "local function f(x) local n = tonumber(x) if x then redis.call('DEL', KEYS[1]) end return n * 2 end\nredis.call('SET', KEYS[1], f(ARGV[3]))", "arithmetic on", "if len(rest) < 2 {"},
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
