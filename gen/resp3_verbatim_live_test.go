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

// TestResp3VerbatimOperationsAgreeWithServer: after redis.setresp(3), a
// verbatim string reaches Lua as a table ({verbatim_string = {format,
// string}}): string functions and .. on it fail the script, # gives 0. The
// checker must refuse them, and pass reading .verbatim_string.string, or
// the reply of a call made before redis.setresp(3).
func TestResp3VerbatimOperationsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const table = ", which after redis.setresp(3) (line 3) is a verbatim string, handed to Lua as a table ({verbatim_string = {format = 'txt', string = ...}}): "
	for _, tc := range []struct {
		name, body, want, fails string // fails: what the server's error holds, "" for none
	}{
		{"string.find", "if string.find(redis.call('INFO', 'server'), 'redis_version', 1, true) then return 'yes' end\nreturn 'no'",
			`scripts/x.lua:4:11: string.find of the reply of INFO` + table + `Lua fails the script at run time ("bad argument #1 to 'find' (string expected, got table)"); read its text as .verbatim_string.string, or call INFO before redis.setresp(3)`,
			"bad argument #1 to 'find' (string expected, got table)"},
		{"concatenation", "return 'x' .. redis.call('LOLWUT')",
			`scripts/x.lua:4:12: concatenation (..) of the reply of LOLWUT` + table + `Lua fails the script at run time ("attempt to concatenate a table value"); read its text as .verbatim_string.string, or call LOLWUT before redis.setresp(3)`,
			"attempt to concatenate a table value"},
		{"the text field", "return string.sub(redis.call('INFO', 'server').verbatim_string.string, 1, 8)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X reads.\n-- @return string\nredis.setresp(3)\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(0).Build()).Error()
			switch {
			case tc.fails == "" && err != nil:
				t.Errorf("the server failed the script: %v", err)
			case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
				t.Errorf("the server replied %v, want an error with %q", err, tc.fails)
			}
		})
	}
	// Called before redis.setresp(3), the reply is a string, as in RESP2.
	const before = "-- X reads.\n-- @return string\nlocal i = redis.call('INFO', 'server')\nredis.setresp(3)\nreturn string.sub(i, 1, 8)\n"
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(before)}); len(got) != 0 {
		t.Errorf("checker refused a reply read before redis.setresp(3): %v", got)
	}
	if err := rc.Do(ctx, rc.B().Eval().Script(before).Numkeys(0).Build()).Error(); err != nil {
		t.Errorf("the server failed a reply read before redis.setresp(3): %v", err)
	}
}
