package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilCompareLeavesOtherAgreesWithServer: v ~= nil is true of false,
// and v ~= false of nil. A local that may hold false (given false on some
// path) tested with ~= nil (or type(v) ~= 'nil'), or one that may hold nil
// (declared without a value) tested with ~= false, may still hold the
// other at redis.call, which Redis refuses: the checker must warn. A
// local that cannot hold the other (a reply, never nil; one never given
// false) is shown to hold a value, and the server runs the call.
func TestNilCompareLeavesOtherAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		c       = "redis.call('EXISTS', KEYS[1]) == 1"
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:7:%d: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
		head    = "-- @key k\n-- @arg a string\n-- @arg rest... string\n-- @return none\n"
	)
	at := func(col string) string { return strings.Replace(warn, "%d", col, 1) }
	for _, tc := range []struct {
		name, decl, test, want, server string // server: part of Redis's error, "" for none
	}{
		{"false, ~= nil", "local v = false", "v ~= nil", at("45"), refused},
		{"false, nil ~= v", "local v = false", "nil ~= v", at("45"), refused},
		{"false, type(v) ~= 'nil'", "local v = false", "type(v) ~= 'nil'", at("53"), refused},
		{"nil, ~= false", "local v", "v ~= false", at("47"), refused},
		{"nil, ~= nil", "local v", "v ~= nil", "", ""},
		{"false, ~= false", "local v = false", "v ~= false", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.decl + "\nif " + c + " then v = ARGV[1] end\nif " + tc.test + " then redis.call('SET', KEYS[1], v) end\nredis.call('ECHO', table.concat(ARGV))\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"}, "a")
		})
	}
	t.Run("a reply, ~= false", func(t *testing.T) {
		src := "-- @key k\n-- @return none\nlocal v = redis.call('GET', KEYS[1])\nif v ~= false then redis.call('SET', KEYS[1], v) end\n"
		checkAndRun(t, rc, src, "", "", []string{"{t}missing"})
	})
}
