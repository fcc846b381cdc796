package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestScoreRangeBlankAgreesWithServer: Redis reads a score range's bound
// (ZCOUNT, ZRANGEBYSCORE, ...) with strtod alone, after an optional "(":
// leading spaces are skipped and an empty bound is 0, so an empty string,
// '(', ' 1' and '(\t1' are taken, while blanks alone or a trailing space
// are not. The checker must refuse a bound exactly where the server fails
// the script.
func TestScoreRangeBlankAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, arg := range []string{"''", "'('", "' 1'", "'(\\t1'", "'\\n-inf'", "'  '", "'( '", "'1 '", "'(1'", "' nan'"} {
		for _, call := range []string{"redis.call('ZCOUNT', KEYS[1], %s, 10)", "redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, %s)"} {
			body := strings.Replace(call, "%s", arg, 1)
			t.Run(body, func(t *testing.T) {
				src := "-- X counts.\n-- @key k\n-- @return none\n" + body + "\nreturn nil\n"
				got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n")
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
				failed := err != nil && !strings.Contains(err.Error(), "redis nil")
				if failed != (got != "") {
					t.Errorf("the server replied %v; the checker said:\n%s", err, got)
				}
			})
		}
	}
}
