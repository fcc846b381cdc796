package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnreachedChainAgreesWithServer: a local function read only by local
// functions the script never runs never runs either, however long the
// chain of them, and whatever order the checker meets them in (one read
// only in a function written in its own body): what it needs of a variadic
// list binds no caller, on every generation, and the server runs a short
// list.
func TestUnreachedChainAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
	var chain strings.Builder
	chain.WriteString("local function k6() redis.call('SET', KEYS[1], ARGV[3]) end\n")
	for _, p := range [][2]string{{"k5", "k6"}, {"k4", "k5"}, {"k3", "k4"}, {"k2", "k3"}, {"k1", "k2"}} {
		chain.WriteString("local function " + p[0] + "() " + p[1] + "() end\n")
	}
	for _, tc := range []struct{ name, body string }{
		{"a chain of six", chain.String()},
		{"read in a function written in its own body", "local function k3() redis.call('SET', KEYS[1], ARGV[3]) end\n" +
			"local function k2() k3() end\nlocal function k1() k2() end\n" +
			"local function f()\n  local function g() f() end\n  k1()\nend\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body
			// (The checker's maps are walked in a random order: generate it
			// often enough to meet each.)
			for range 40 {
				checkShortListCaller(t, src, "")
				if t.Failed() {
					break
				}
			}
			if refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, "must be strings or integers"); refused || err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
