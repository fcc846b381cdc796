package gen

import (
	"strings"
	"testing"
)

// TestResp2ChecksBeforeResp3: what a script does before its
// redis.setresp(3), or with replies of calls made before it, is checked as
// in a script without one: the replies reach Lua, and the caller, in
// RESP2. Only what RESP3 may reach is checked for RESP3 shapes.
func TestResp2ChecksBeforeResp3(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a return before", "if redis.call('EXISTS', KEYS[1]) == 0 then\n  return redis.call('GET', KEYS[1])\nend\nredis.setresp(3)\nreturn redis.call('HLEN', KEYS[1])",
			"scripts/x.lua:5:10: GET replies a string or nil, but @return int64 needs an integer reply"},
		{"a comparison before", "if redis.call('GET', KEYS[1]) == 1 then\n  return 1\nend\nredis.setresp(3)\nreturn redis.call('HLEN', KEYS[1])",
			"scripts/x.lua:4:31: == compares the reply of GET, a string or nil (in Lua a string or a status table, or false for nil), with 1, a number, but Lua never finds a string equal to a number: it is always false; convert the reply with tonumber(...)"},
		{"a condition on a reply read before", "local e = redis.call('EXISTS', KEYS[1])\nredis.setresp(3)\nif e then\n  return 1\nend\nreturn 0",
			"scripts/x.lua:6:4: e (the reply of EXISTS) is always true as a condition: it is an integer, and Lua finds 0 true too (only nil and false are false in Lua, and Redis replies nil as false); compare it with a number (== 1, > 0)"},
		{"a local function never called", "local function r3()\n  redis.setresp(3)\nend\nreturn redis.call('GET', KEYS[1])",
			"scripts/x.lua:7:8: GET replies a string or nil, but @return int64 needs an integer reply"},
		{"a return after", "redis.setresp(3)\nreturn redis.call('HLEN', KEYS[1])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @return int64\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
