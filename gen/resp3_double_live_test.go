package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3DoubleOperationsAgreeWithServer: after redis.setresp(3), ZSCORE,
// ZINCRBY and ZADD INCR reply a double, which Redis hands to Lua as a table
// {double = ...}: the checker must refuse computing with it, and the server
// fail each such script (or, for #, give 0); reading .double, or calling
// the command before redis.setresp(3), must pass and run.
func TestResp3DoubleOperationsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const after = ", which after redis.setresp(3) (line 3) is a double, handed to Lua as a table ({double = ...}): "
	for _, tc := range []struct {
		name, body, want, fails string // fails: what the server's error holds, "" for none
	}{
		{"arithmetic", "return redis.call('ZSCORE', KEYS[1], 'm') + 1",
			`scripts/x.lua:4:43: arithmetic (+) on the reply of ZSCORE` + after + `Lua fails the script at run time ("attempt to perform arithmetic on a table value"); read its number as .double, or call ZSCORE before redis.setresp(3)`,
			"attempt to perform arithmetic on a table value"},
		{"concatenation", "return 'n' .. redis.call('ZINCRBY', KEYS[1], 1, 'm')",
			`scripts/x.lua:4:12: concatenation (..) of the reply of ZINCRBY` + after + `Lua fails the script at run time ("attempt to concatenate a table value"); read its number as .double, or call ZINCRBY before redis.setresp(3)`,
			"attempt to concatenate a table value"},
		{"comparison", "if redis.call('ZSCORE', KEYS[1], 'm') > 1 then return 1 end\nreturn 0",
			`scripts/x.lua:4:39: > compares the reply of ZSCORE` + after + `Lua fails the script at run time ("attempt to compare ..."); read its number as .double, or call ZSCORE before redis.setresp(3)`,
			"attempt to compare"},
		{"tonumber", "return tonumber(redis.call('ZADD', KEYS[1], 'INCR', 1, 'm')) + 1",
			`scripts/x.lua:4:62: arithmetic (+) on tonumber(the reply of ZADD)` + after + `tonumber gives nil for a table, and Lua fails the script at run time on nil; read its number as .double, or call ZADD before redis.setresp(3)`,
			"attempt to perform arithmetic on a nil value"},
		{"a command argument", "return redis.call('INCRBY', KEYS[1] .. ':n', redis.call('ZSCORE', KEYS[1], 'm'))",
			`scripts/x.lua:4:46: argument 2 of INCRBY is the reply of ZSCORE` + after + `Redis refuses it at run time ("Lua redis lib command arguments must be strings or integers"); read its number as .double, or call ZSCORE before redis.setresp(3)`,
			"Lua redis lib command arguments must be strings or integers"},
		{"string.len", "return string.len(redis.call('ZSCORE', KEYS[1], 'm'))",
			`scripts/x.lua:4:15: string.len of the reply of ZSCORE` + after + `Lua fails the script at run time ("bad argument #1 to 'len' (string expected, got table)"); read its number as .double, or call ZSCORE before redis.setresp(3)`,
			"bad argument #1 to 'len' (string expected, got table)"},
		{"length", "return #redis.call('ZSCORE', KEYS[1], 'm')",
			`scripts/x.lua:4:8: # of the reply of ZSCORE` + after + `its length is always 0; read its number as .double, or call ZSCORE before redis.setresp(3)`, ""},
		{"the double field", "return redis.call('ZSCORE', KEYS[1], 'm').double + 1", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "-- @key k\n-- @return int64\nredis.setresp(3)\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(body)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Zadd().Key("{t}k").ScoreMember().ScoreMember(1.5, "m").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(body).Numkeys(1).Key("{t}k").Build()).Error()
			switch {
			case tc.fails == "" && err != nil:
				t.Errorf("the server failed the script: %v", err)
			case tc.fails != "" && (err == nil || !strings.Contains(err.Error(), tc.fails)):
				t.Errorf("the server replied %v, want an error with %q", err, tc.fails)
			}
		})
	}
	// Called before redis.setresp(3), the reply is a string, as in RESP2.
	const before = "-- @key k\n-- @return int64\nlocal s = redis.call('ZSCORE', KEYS[1], 'm') or '0'\nredis.setresp(3)\nreturn math.floor(s + 1)\n"
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(before)}); len(got) != 0 {
		t.Errorf("checker refused a reply read before redis.setresp(3): %v", got)
	}
	if err := rc.Do(ctx, rc.B().Eval().Script(before).Numkeys(1).Key("{t}k").Build()).Error(); err != nil {
		t.Errorf("the server failed a reply read before redis.setresp(3): %v", err)
	}
}
