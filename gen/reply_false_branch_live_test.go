package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyFalseBranchAgreesWithServer: a local holding a reply that may be
// nil is false where a condition shows it false (the body of if not v, the
// else of if v, the right of v or ...): reading it there is no test that
// makes it safe, and an operation on it fails whenever that path runs, as
// the server shows with the key missing. Given a value there first, or
// tested again, or read in a function defined there (which runs when it is
// called, maybe once the local holds a value), it is taken.
func TestReplyFalseBranchAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		fails = "attempt to concatenate local 'v' (a boolean value)"
		warn  = `scripts/x.lua:6:%s: warning: concatenation (..) of v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, use, col, server string // col: of the warning, "" for none
	}{
		{"the body of if not v", "if not v then redis.call('SET', KEYS[1], v .. 'x') end", "44", fails},
		{"the else of if v", "if v then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], v .. 'x') end", "72", fails},
		{"the right of v or", "local x = v or redis.call('SET', KEYS[1], v .. 'x')", "45", fails},
		{"given a value there first", "if not v then v = 'z'; redis.call('SET', KEYS[1], v .. 'x') end", "", ""},
		{"the right of v and", "local x = v and redis.call('SET', KEYS[1], v .. 'x')", "", ""},
		// A function defined there runs when it is called, after v is given
		// a value: the condition shows nothing of v then.
		{"a function defined there, called once given a value", "if not v then local function g() return v .. 'x' end; v = 'z'; redis.call('SET', KEYS[1], g()) end", "", ""},
		{"a function defined there, passing it", "if not v then local function g() redis.call('SET', KEYS[1], v) end; v = 'z'; g() end", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @return none\nredis.call('DEL', KEYS[1])\nlocal v = redis.call('GET', KEYS[2])\n" + tc.use + "\n"
			want := ""
			if tc.col != "" {
				want = strings.Replace(warn, "%s", tc.col, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k", "{t}missing"})
		})
	}
}
