package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestIdentityReplyAgreesWithServer: a local function whose one return,
// which ends it, gives its parameter back (local function id(x) return x
// end) gives the reply a call passes it: a local given id(redis.call('GET',
// k)) is false when GET replies nil, as the reply itself, and passed
// untested to redis.call it is warned of; the server refuses the call on a
// missing key. Tested first, or given a default, it is taken, and the
// server runs it.
func TestIdentityReplyAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:%s: warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, body, at, server string // at: line:col of the warning, "" for none
	}{
		{"the reply passed", "local v = id(redis.call('GET', KEYS[1]))\nredis.call('SET', KEYS[1], v)", "5:28", refused},
		{"a local holding the reply passed", "local r = redis.call('GET', KEYS[1])\nlocal v = id(r)\nredis.call('SET', KEYS[1], v)", "6:28", refused},
		{"tested", "local v = id(redis.call('GET', KEYS[1]))\nif v then redis.call('SET', KEYS[1], v) end", "", ""},
		{"given a default", "local v = id(redis.call('GET', KEYS[1]) or '')\nredis.call('SET', KEYS[1], v)", "", ""},
		{"a string passed", "local v = id('x')\nredis.call('SET', KEYS[1], v)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\nlocal function id(x) return x end\n" + tc.body + "\n"
			want := ""
			if tc.at != "" {
				want = strings.Replace(warn, "%s", tc.at, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}missing"})
		})
	}
}
