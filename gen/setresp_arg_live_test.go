package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSetrespArgAgreesWithServer: Redis reads the argument of
// redis.setresp as Lua's tonumber does, a string too, and truncates it to
// an integer: 3.0, 0x3, 3.5 and '3' switch to RESP3, 2.5 keeps RESP2, and
// only what gives another integer fails the script. For each argument the
// checker must refuse the call exactly when the server fails the script,
// and the return of ZRANGE ... WITHSCORES for @return []string exactly
// when the server replies RESP3's pairs in arrays.
func TestSetrespArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}z").ScoreMember().ScoreMember(1, "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"3", "3.0", "0x3", "3e0", "3.5", "3.9", "'3'", "'3.7'", "' 3 '", "'0x3'",
		"2", "2.0", "2.5", "'2'", "1.9", "4.0", "-3", "'x'", "'4'"} {
		t.Run(arg, func(t *testing.T) {
			src := "-- X lists.\n-- @key k\n-- @return []string\nredis.setresp(" + arg + ")\nreturn redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\n"
			got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n")
			fails, resp3 := strings.Contains(got, "RESP version must be 2 or 3"), strings.Contains(got, "called after redis.setresp(3)")
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}z").Build()).ToArray()
			switch {
			case err != nil:
				if !fails || !strings.Contains(err.Error(), "RESP version must be 2 or 3") {
					t.Errorf("the server failed the script (%v); the checker said:\n%s", err, got)
				}
			case len(vals) > 0 && !vals[0].IsString():
				if fails || !resp3 {
					t.Errorf("the server replied RESP3's pairs in arrays; the checker said:\n%s", got)
				}
			default:
				if got != "" {
					t.Errorf("the server replied %v; the checker said:\n%s", vals, got)
				}
			}
		})
	}
}
