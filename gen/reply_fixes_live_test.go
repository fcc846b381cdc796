package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRepliesSchemasLeaveOut: LMOVE replies nil for an empty source list,
// and OBJECT FREQ, IDLETIME and REFCOUNT nil for a missing key, though
// their reply schemas allow no nil: the checker must refuse returning them
// for a @return that is not nullable (the callers would get a *DecodeError
// whenever the list or key is missing), and pass the nullable one; the
// server replies nil for each on a missing key.
func TestRepliesSchemasLeaveOut(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct{ ret, call, want string }{
		{"string", "redis.call('LMOVE', KEYS[1], KEYS[1], 'LEFT', 'RIGHT')", "LMOVE replies a string or nil, but @return string is not nullable: declare @return string?"},
		{"int64", "redis.call('OBJECT', 'FREQ', KEYS[1])", "OBJECT FREQ replies an integer or nil, but @return int64 is not nullable: declare @return int64?"},
		{"int64", "redis.call('OBJECT', 'IDLETIME', KEYS[1])", "OBJECT IDLETIME replies an integer or nil, but @return int64 is not nullable: declare @return int64?"},
		{"int64", "redis.call('OBJECT', 'REFCOUNT', KEYS[1])", "OBJECT REFCOUNT replies an integer or nil, but @return int64 is not nullable: declare @return int64?"},
	} {
		src := "-- X reads.\n-- @key k\n-- @return " + tc.ret + "\nreturn " + tc.call + "\n"
		want := "scripts/x.lua:4:8: " + tc.want
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
			t.Errorf("checker:\n%s\nwant:\n%s", got, want)
		}
		nullable := strings.Replace(src, "-- @return "+tc.ret, "-- @return "+tc.ret+"?", 1)
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(nullable)}); len(got) != 0 {
			t.Errorf("checker refused @return %s?: %v", tc.ret, got)
		}
		if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).Error(); !rueidis.IsRedisNil(err) {
			t.Errorf("%s: the server replied %v on a missing key, want nil", tc.call, err)
		}
	}
}
