package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNothingArgAgreesWithServer: a call of a local function that returns
// nothing, passed last to redis.call, passes no argument: the command gets
// the words before it alone, and the checks read them so. HSET k a b c f()
// is HSET k a b c, which Redis refuses (a field without its value), as
// SET k v EX f() is SET k v EX; the generator must refuse both.
func TestNothingArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, call string
		server     string // what the server's error holds
		err        string // what the generator's error holds
	}{
		{"HSET with a field short", "redis.call('HSET', KEYS[1], 'a', 'b', 'c', f())", "wrong number of arguments", "HSET"},
		{"SET with EX and no time", "redis.call('SET', KEYS[1], 'v', 'EX', f())", "syntax error", "SET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X does it.\n-- @key k\n-- @return none\nlocal function f() end\n" + tc.call + "\n"
			if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error(); err == nil || !strings.Contains(err.Error(), tc.server) {
				t.Fatalf("the server returned %v, want an error holding %q", err, tc.server)
			}
			_, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("the generator returned %v, want an error holding %q", err, tc.err)
			}
		})
	}
}
