package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestZRangeBoundsAgreeWithServer: ZRANGE and ZRANGESTORE read their bounds
// as indexes (integers), as scores with BYSCORE (numbers, "(" before one,
// -inf, +inf) or as member bounds with BYLEX ([a, (a, - or +), and
// ZRANGEBYLEX, ZREVRANGEBYLEX, ZLEXCOUNT and ZREMRANGEBYLEX theirs as member
// bounds; Redis refuses a bound of the wrong form whatever the key holds.
// The checker must refuse a literal bound exactly where the server fails
// the script, and take a bound it cannot read, or any bound when a word it
// cannot read may be BYSCORE or BYLEX.
func TestZRangeBoundsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	bounds := []string{"0", "'0'", "'-1'", "1.5", "'1.5'", "'x'", "'(1'", "'-inf'", "'+inf'", "'nan'", "'-'", "'+'", "'[a'", "'(a'", "'a'", "' 1'", "''", "ARGV[1]"}
	for _, call := range []string{
		"redis.call('ZRANGE', KEYS[1], %s, -1)",
		"redis.call('ZRANGE', KEYS[1], 0, %s, 'REV')",
		"redis.call('ZRANGE', KEYS[1], %s, '+inf', 'BYSCORE')",
		"redis.call('ZRANGE', KEYS[1], '-', %s, 'BYLEX', 'LIMIT', 0, 1)",
		"redis.call('ZRANGE', KEYS[1], %s, 1, ARGV[1])",
		"redis.call('ZRANGESTORE', KEYS[1], KEYS[1], %s, 1)",
		"redis.call('ZRANGESTORE', KEYS[1], KEYS[1], %s, '+', 'bylex')",
		"redis.call('ZRANGEBYLEX', KEYS[1], %s, '+')",
		"redis.call('ZREVRANGEBYLEX', KEYS[1], '+', %s)",
		"redis.call('ZLEXCOUNT', KEYS[1], %s, '+')",
		"redis.call('ZREMRANGEBYLEX', KEYS[1], '-', %s)",
	} {
		for _, b := range bounds {
			body := strings.Replace(call, "%s", b, 1)
			t.Run(body, func(t *testing.T) {
				src := "-- X ranges.\n-- @key k\n-- @arg a string\n-- @return none\n" + body + "\nreturn nil\n"
				if !strings.Contains(body, "ARGV") {
					src = strings.Replace(src, "-- @arg a string\n", "", 1)
				}
				got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n")
				if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
					t.Fatal(err)
				}
				// ARGV[1] is a word the server takes where it is one.
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("REV").Build()).Error()
				failed := err != nil && !strings.Contains(err.Error(), "redis nil")
				if failed != (got != "") && !strings.Contains(body, "ARGV") {
					t.Errorf("the server replied %v; the checker said:\n%s", err, got)
				}
				if strings.Contains(body, "ARGV") && got != "" {
					t.Errorf("the checker refused a call it cannot read:\n%s", got)
				}
			})
		}
	}
}
