package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestBoolArgTruthAgreesWithServer: a bool @arg arrives as "1" or "0",
// strings Lua finds true either way, so testing it as a condition takes the
// same branch for false as for true: the checker must refuse it, and the
// server delete the key though the callers passed false ("0"); comparing
// it with '1' keeps it.
func TestBoolArgTruthAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		cond, want string
		deleted    bool // with the argument false ("0")
	}{
		{"ARGV[1]", `scripts/x.lua:4:4: ARGV[1] is always true as a condition: it is @arg purge bool, which the callers send as "1" or "0", both strings, and Lua finds every string true (only nil and false are false); compare it: ARGV[1] == '1'`, true},
		{"not not ARGV[1]", `scripts/x.lua:4:12: not ARGV[1] is always false: it is @arg purge bool, which the callers send as "1" or "0", both strings, and Lua finds every string true (only nil and false are false); compare it: ARGV[1] == '0'`, true},
		{"ARGV[1] == '1'", "", false},
	} {
		src := "-- @key k\n-- @arg purge bool\n-- @return int64\nif " + tc.cond + " then return redis.call('DEL', KEYS[1]) end\nreturn 0\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.cond, got, tc.want)
		}
		if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("0").Build()).AsInt64()
		if err != nil || (n == 1) != tc.deleted {
			t.Errorf("%s: the server deleted %d keys, %v, with the argument false; want deleted: %v", tc.cond, n, err, tc.deleted)
		}
	}
}
