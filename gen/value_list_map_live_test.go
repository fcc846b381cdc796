package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestValueListAsMapAgreesWithServer returns a list of values (SMEMBERS,
// LRANGE, HKEYS, LPOP with a count) for @return map[string]string: the
// checker must refuse it, and the server reply the odd number of values the
// decoder refuses, for a set of three members; HGETALL's pairs stay accepted.
func TestValueListAsMapAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const pairs = "reads field-value pairs: the callers get a *DecodeError for an odd number of values, and pair the values among themselves otherwise; declare @return []string"
	for _, tc := range []struct {
		name, setup, call, want string
	}{
		{"SMEMBERS", "redis.call('SADD', KEYS[1], 'a', 'b', 'c')", "redis.call('SMEMBERS', KEYS[1])",
			"scripts/x.lua:4:8: SMEMBERS replies a list of values, not field-value pairs, but @return map[string]string " + pairs},
		{"LRANGE", "redis.call('RPUSH', KEYS[1], 'a', 'b', 'c')", "redis.call('LRANGE', KEYS[1], 0, -1)",
			"scripts/x.lua:4:8: LRANGE replies a list of values, not field-value pairs, but @return map[string]string " + pairs},
		{"HKEYS", "redis.call('HSET', KEYS[1], 'a', '1', 'b', '2', 'c', '3')", "redis.call('HKEYS', KEYS[1])",
			"scripts/x.lua:4:8: HKEYS replies a list of values, not field-value pairs, but @return map[string]string " + pairs},
		{"HGETALL", "redis.call('HSET', KEYS[1], 'a', '1')", "redis.call('HGETALL', KEYS[1])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return map[string]string\n" + tc.setup + "\nreturn " + tc.call + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			if odd := len(vals)%2 == 1; odd != (tc.want != "") {
				t.Errorf("the server replied %d values", len(vals))
			}
		})
	}
}
