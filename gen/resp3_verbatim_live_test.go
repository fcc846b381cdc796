package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3VerbatimReplies: after redis.setresp(3), INFO, LOLWUT, MEMORY
// DOCTOR and the other commands Redis answers with a verbatim string reach
// the caller as one (RESP3 "="), which rueidis does not take for a string,
// so no generated decoder reads it: the checker must refuse returning it,
// alone or in a table; called before redis.setresp(3), it is a plain string.
func TestResp3VerbatimReplies(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const reply = `, called after redis.setresp(3) (line 3): it is then a verbatim string (RESP3 "=" with a "txt:" prefix), not a plain string, which `
	for _, tc := range []struct {
		name, ret, body, want string
		plain                 bool // whether the server replies a plain string
	}{
		{"INFO", "string", "redis.setresp(3)\nreturn redis.call('INFO', 'server')",
			"scripts/x.lua:4:8: returns the reply of INFO" + reply + "@return string does not read (the callers get a *DecodeError, or values are lost); call INFO before redis.setresp(3), or build the reply in the script", false},
		{"LOLWUT", "string?", "redis.setresp(3)\nreturn redis.call('LOLWUT')",
			"scripts/x.lua:4:8: returns the reply of LOLWUT" + reply + "@return string? does not read (the callers get a *DecodeError, or values are lost); call LOLWUT before redis.setresp(3), or build the reply in the script", false},
		{"MEMORY DOCTOR", "bytes", "redis.setresp(3)\nreturn redis.call('memory', 'doctor')",
			"scripts/x.lua:4:8: returns the reply of MEMORY DOCTOR" + reply + "@return bytes does not read (the callers get a *DecodeError, or values are lost); call MEMORY DOCTOR before redis.setresp(3), or build the reply in the script", false},
		{"in a table", "[]string", "redis.setresp(3)\nreturn {redis.call('MEMORY', 'MALLOC-STATS')}",
			"scripts/x.lua:4:8: returns an array with the reply of MEMORY MALLOC-STATS at [0]" + reply + "@return []string does not read there (the callers get a *DecodeError); call MEMORY MALLOC-STATS before redis.setresp(3), or build the value in the script", false},
		{"before redis.setresp(3)", "string", "local s = redis.call('INFO', 'server')\nredis.setresp(3)\nreturn s", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- S does.\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			msg, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(0).Build()).ToMessage()
			if err != nil {
				t.Fatal(err)
			}
			if vals, err := msg.ToArray(); err == nil && len(vals) > 0 {
				msg = vals[0]
			}
			if msg.IsString() != tc.plain {
				t.Errorf("the server replied %.60s; want a plain string: %v", msg.String(), tc.plain)
			}
		})
	}
	// CLUSTER INFO and NODES are refused the same way (the test server is
	// no cluster node).
	src := "-- S does.\n-- @return string\nredis.setresp(3)\nreturn redis.call('CLUSTER', 'NODES')\n"
	want := "scripts/x.lua:4:8: returns the reply of CLUSTER NODES" + reply + "@return string does not read (the callers get a *DecodeError, or values are lost); call CLUSTER NODES before redis.setresp(3), or build the reply in the script"
	if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
		t.Errorf("checker:\n%s\nwant:\n%s", got, want)
	}
}
