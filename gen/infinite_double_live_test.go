package gen

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestInfiniteDoubleAgreesWithServer: an infinite increment of INCRBYFLOAT
// or HINCRBYFLOAT ('inf', 'infinity', or a Lua number beyond a double,
// 1e400, which Lua sends as inf) fails the call whatever the key holds, as
// does an infinite GEO coordinate; a string 1e400, which Redis reads as a
// long double, and an infinite score do not. The checker must refuse a
// literal exactly where the server fails the script.
func TestInfiniteDoubleAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		call  string
		fails bool
	}{
		{"redis.call('INCRBYFLOAT', KEYS[1], %s)", true},
		{"redis.call('HINCRBYFLOAT', KEYS[1], 'f', %s)", true},
		{"redis.call('GEOADD', KEYS[1], %s, 10, 'm')", true},
		{"redis.call('GEOADD', KEYS[1], 10, %s, 'm')", true},
		{"redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', %s, 10, 'BYRADIUS', 1, 'km')", true},
		{"redis.call('ZADD', KEYS[1], %s, 'm')", false},
	} {
		for _, arg := range []string{"'inf'", "'-inf'", "'+Infinity'", "1e400", "-1e400", "'1e400'", "'1.5'"} {
			body := fmt.Sprintf(tc.call, arg)
			t.Run(body, func(t *testing.T) {
				src := "-- X changes.\n-- @key k\n-- @return none\n" + body + "\nreturn nil\n"
				got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n")
				if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
					t.Fatal(err)
				}
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
				failed := err != nil && !strings.Contains(err.Error(), "redis nil")
				if failed != (got != "") {
					t.Errorf("the server replied %v; the checker said:\n%s", err, got)
				}
			})
		}
	}
}
