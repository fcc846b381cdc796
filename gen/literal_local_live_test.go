package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestLiteralLocalAgreesWithServer: a local that only ever holds one
// literal (local n = -0, local n = '01') reaches a command as that literal
// does, so it is checked as the literal written in place: Redis refuses
// -0 and '01' where it reads an integer, whatever the key holds. A local
// given other values too is checked as each literal it holds on some path:
// Redis refuses the call on that path. One replaced on every path (or in
// its own block) no longer holds it.
func TestLiteralLocalAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"-0", "local n = -0\nreturn redis.call('EXPIRE', KEYS[1], n)",
			`scripts/x.lua:5:38: EXPIRE reads an integer there (seconds), and the Lua number -0 is sent as "-0", which Redis reads as no integer, or as 0 when the script has a 0 literal before it (Lua 5.1 keeps one constant for both): Redis refuses the call at run time, after the script's earlier writes; write 0`,
			"not an integer"},
		{"leading zero", "local n = '01'\nreturn redis.call('EXPIRE', KEYS[1], n)",
			`scripts/x.lua:5:38: EXPIRE reads an integer there (seconds), and "01" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time`,
			"not an integer"},
		{"an integer", "local n = '5'\nreturn redis.call('EXPIRE', KEYS[1], n)", "", ""},
		{"given another value", "local n = '01'\nif redis.call('EXISTS', KEYS[1]) == 0 then n = 5 end\nreturn redis.call('EXPIRE', KEYS[1], n)",
			`scripts/x.lua:6:38: EXPIRE reads an integer there (seconds), and "01" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time (n holds "01" on some paths)`,
			"not an integer"},
		{"given it on one path", "local n\nif redis.call('EXISTS', KEYS[1]) == 1 then n = -0 else n = 5 end\nreturn redis.call('EXPIRE', KEYS[1], n)",
			`scripts/x.lua:6:38: EXPIRE reads an integer there (seconds), and the Lua number -0 is sent as "-0", which Redis reads as no integer, or as 0 when the script has a 0 literal before it (Lua 5.1 keeps one constant for both): Redis refuses the call at run time, after the script's earlier writes; write 0 (n holds -0 on some paths)`,
			"not an integer"},
		{"given it in a loop's first iteration", "local n = '01'\nfor i = 1, 2 do\n  redis.call('EXPIRE', KEYS[1], n)\n  n = 5\nend\nreturn 1",
			`scripts/x.lua:6:33: EXPIRE reads an integer there (seconds), and "01" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time (n holds "01" on some paths)`,
			"not an integer"},
		{"given a negation on another path", "local n = '01'\nif redis.call('EXISTS', KEYS[1]) == 0 then n = -redis.call('STRLEN', KEYS[1]) end\nreturn redis.call('EXPIRE', KEYS[1], n)",
			`scripts/x.lua:6:38: EXPIRE reads an integer there (seconds), and "01" is none (Redis reads an integer's digits alone: no leading zero, "+", space, decimal point or exponent): Redis refuses the call at run time (n holds "01" on some paths)`,
			"not an integer"},
		{"replaced on every path", "local n = '01'\nif redis.call('EXISTS', KEYS[1]) == 1 then n = 5 else n = 6 end\nreturn redis.call('EXPIRE', KEYS[1], n)", "", ""},
		{"replaced by a function called first", "local n = '01'\nlocal function set() n = 5 end\nset()\nreturn redis.call('EXPIRE', KEYS[1], n)", "", ""},
		{"replaced", "local n = '01'\nn = 5\nreturn redis.call('EXPIRE', KEYS[1], n)", "", ""},
		{"other integers", "local n = 5\nif redis.call('EXISTS', KEYS[1]) == 1 then n = '10' end\nreturn redis.call('EXPIRE', KEYS[1], n)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X expires.\n-- @key k\n-- @return int64\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
			if rueidis.IsRedisNil(err) {
				err = nil
			}
			switch {
			case tc.server == "" && err != nil:
				t.Errorf("the server refused it: %v", err)
			case tc.server != "" && (err == nil || !strings.Contains(err.Error(), tc.server)):
				t.Errorf("the server returned %v; want an error with %q", err, tc.server)
			}
		})
	}
}
