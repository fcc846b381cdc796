package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPerArgRepliesAgreeWithServer returns the reply of a command that
// gives one value per key or field the call names (MGET, HMGET, ZMSCORE,
// SMISMEMBER, GEOHASH) for a record: with more of them than the record has
// fields, the checker must refuse it, and the server reply that many values
// whatever the data (here, none of the keys exists), which the decoder
// refuses.
func TestPerArgRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, call, want string
		n                     int // values the server replies
	}{
		{"HMGET of three fields", "{a string?, b string?}", "redis.call('HMGET', KEYS[1], 'a', 'b', 'c')",
			"scripts/x.lua:3:8: HMGET replies one value per field given, 3 here, but @return {a string?, b string?} has 2 fields: the callers get a *DecodeError on every call; read fewer, or add fields to the record", 3},
		{"MGET of two keys", "{a string?}", "redis.call('MGET', KEYS[1], KEYS[1] .. ':x')",
			"scripts/x.lua:3:8: MGET replies one value per key given, 2 here, but @return {a string?} has 1 field: the callers get a *DecodeError on every call; read fewer, or add fields to the record", 2},
		{"SMISMEMBER of two members", "{a bool}", "redis.call('SMISMEMBER', KEYS[1], 'a', 'b')",
			"scripts/x.lua:3:8: SMISMEMBER replies one value per member given, 2 here, but @return {a bool} has 1 field: the callers get a *DecodeError on every call; read fewer, or add fields to the record", 2},
		{"HMGET of as many fields", "{a string?, b string?}", "redis.call('HMGET', KEYS[1], 'a', 'b')", "", 2},
		{"HMGET of fewer fields", "{a string?, b string?}", "redis.call('HMGET', KEYS[1], 'a')", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return " + tc.ret + "\nreturn " + tc.call + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) != tc.n {
				t.Errorf("the server replied %d values, want %d", len(vals), tc.n)
			}
		})
	}
}
