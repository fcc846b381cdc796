package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSecondValueReplyAgreesWithServer: local mode, v = f(), f a local
// function whose one return, which ends it, gives a command's reply as its
// second value (return t, redis.call('GET', k)), gives v that reply: false
// when GET replies nil, so passed to redis.call untested it is warned of,
// and the server refuses the call on a missing key. Tested first, or
// given a default in the return, it is taken, and the server runs it.
func TestSecondValueReplyAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const warn = `scripts/x.lua:%s: warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	for _, tc := range []struct {
		name, ret, use, at, server string // at: line:col of the warning, "" for none
	}{
		{"untested", "redis.call('GET', KEYS[1])", "redis.call('SET', KEYS[2], v)", "8:28", "Lua redis lib command arguments must be strings or integers"},
		{"tested", "redis.call('GET', KEYS[1])", "if v then redis.call('SET', KEYS[2], v) end", "", ""},
		{"given a default", "redis.call('GET', KEYS[1]) or ''", "redis.call('SET', KEYS[2], v)", "", ""},
		{"a string", "tostring(redis.call('EXISTS', KEYS[1]))", "redis.call('SET', KEYS[2], v)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key j\n-- @return none\nlocal function get()\n  return redis.call('TYPE', KEYS[2]).ok, " + tc.ret + "\nend\nlocal mode, v = get()\n" + tc.use + "\n"
			want := ""
			if tc.at != "" {
				want = strings.Replace(warn, "%s", tc.at, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}missing", "{t}j"})
		})
	}
}
