package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOddPairsAgreeWithServer returns a table of a fixed odd number of
// values for @return map[string]string: the checker must refuse it, and the
// server reply that many values, which the decoder refuses on every call.
func TestOddPairsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body, want string
		n          int
	}{
		{"return {'owner', redis.call('GET', KEYS[1]) or '', 'ttl'}",
			"scripts/x.lua:3:8: returns an array of 3 values, but @return map[string]string reads field-value pairs: the callers get a *DecodeError on every call; give every field its value", 3},
		{"return {'owner', redis.call('GET', KEYS[1]) or '', 'ttl', tostring(redis.call('PTTL', KEYS[1]))}", "", 4},
	} {
		src := "-- @key k\n-- @return map[string]string\n" + tc.body + "\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.body, got, tc.want)
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
		if err != nil || len(vals) != tc.n {
			t.Errorf("%s: the server replied %d values, %v; want %d", tc.body, len(vals), err, tc.n)
		}
	}
}
