package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNotOfTestAgreesWithServer: not (t.w and t.w ~= ”) is false only
// where t.w holds a value, as not t.w is: after if not (...) then return
// end, a field a never-changed table local does not list (and a local that
// may hold nil) is passed to redis.call only where it holds one. The
// checker must accept it, and the server, which never gets there with nil,
// runs the script. Where the test does not show it (not (t.w or c)), it is
// refused still.
func TestNotOfTestAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- X does it.\n-- @key k\n-- @arg a string\n-- @return none\nlocal t = {v = ARGV[1]}\nlocal v\nif redis.call('EXISTS', KEYS[1]) == 0 then v = ARGV[1] end\n"
		nilW    = "argument 2 of redis.call is nil (t.w: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)"
		refused = "Lua redis lib command arguments must be strings or integers"
	)
	for _, tc := range []struct {
		name, body, want, server, arg string // server: part of Redis's error, "" for none
	}{
		{"a field, not (and)", "if not (t.w and t.w ~= '') then return end\nredis.call('SET', KEYS[1], t.w)", "", "", "a"},
		{"a field, not not", "if not not t.w then redis.call('SET', KEYS[1], t.w) end", "", "", "a"},
		{"a field, the else of not (and)", "if not (t.w and ARGV[1]) then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], t.w) end", "", "", "a"},
		{"a local, not (and)", "if not (v and v ~= '') then return end\nredis.call('SET', KEYS[1], v)", "", "", "a"},
		{"a field, not (or)", "if not (t.w or ARGV[1] == 'x') then return end\nredis.call('SET', KEYS[1], t.w)", "scripts/x.lua:9:28: " + nilW, refused, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body+"\n", tc.want, tc.server, []string{"{t}k"}, tc.arg)
		})
	}
}
