package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTableTrueLocalArgAgreesWithServer: a local holding true or a table
// (a constructor, empty or not) passed to redis.call is refused, as either
// written in place is: Redis refuses both as command arguments. One given
// a string on every path after it is taken.
func TestTableTrueLocalArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"true", "local b = true\nredis.call('SET', KEYS[1], b)", `scripts/x.lua:6:28: argument 2 of redis.call is b, which holds true: Redis refuses it at run time (command arguments must be strings or numbers)`, refused},
		{"an empty table", "local b = {}\nredis.call('SET', KEYS[1], b)", `scripts/x.lua:6:28: argument 2 of redis.call is b, which holds a table: Redis refuses it at run time (command arguments must be strings or numbers)`, refused},
		{"a table of a string", "local b = {'x'}\nredis.call('SET', KEYS[1], b)", `scripts/x.lua:6:28: argument 2 of redis.call is b, which holds a table: Redis refuses it at run time (command arguments must be strings or numbers)`, refused},
		{"a string on every path after it", "local b = {}\nif ARGV[1] == '1' then b = 'x' else b = 'y' end\nredis.call('SET', KEYS[1], b)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nredis.call('ECHO', ARGV[1])\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "1")
		})
	}
}
