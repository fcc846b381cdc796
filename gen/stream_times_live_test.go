package gen

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestStreamTimesAgreeWithServer: a unix time where XAUTOCLAIM, XCLAIM and
// XPENDING read an idle time claims or lists nothing, and a length of time
// as XCLAIM's TIME leaves the entry idle for decades, as the checker's
// errors say; the right kinds claim and list the entry.
func TestStreamTimesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for _, tc := range []struct {
		body, typ, arg string
		want           int64 // the script's reply
		err            string
	}{
		{"return #redis.call('XAUTOCLAIM', KEYS[1], 'g', 'b', ARGV[1], '0')[2]", "time", now, 0, "so the call never claims one"},
		{"return #redis.call('XAUTOCLAIM', KEYS[1], 'g', 'b', ARGV[1], '0')[2]", "duration", "0", 1, ""},
		{"return #redis.call('XCLAIM', KEYS[1], 'g', 'b', ARGV[1], '1-1')", "time", now, 0, "so the call never claims one"},
		{"return #redis.call('XPENDING', KEYS[1], 'g', 'IDLE', ARGV[1], '-', '+', 10)", "time", now, 0, "so the call never lists one"},
		{"return #redis.call('XPENDING', KEYS[1], 'g', 'IDLE', ARGV[1], '-', '+', 10)", "duration", "0", 1, ""},
		// The entry's idle time, in days, after XCLAIM's TIME.
		{"redis.call('XCLAIM', KEYS[1], 'g', 'b', 0, '1-1', 'TIME', ARGV[1])\nreturn math.floor(redis.call('XPENDING', KEYS[1], 'g', '-', '+', 1)[1][3] / 86400000)", "duration", "30000", 10000, "January 1970"},
	} {
		src := "-- @key s\n-- @arg a " + tc.typ + "\n-- @return int64\n" + tc.body + "\n"
		out := checkUsed(t, src)
		switch {
		case tc.err == "" && len(out) != 0:
			t.Errorf("%s with @arg %s: checker output %q, want none", tc.body, tc.typ, out)
		case tc.err != "" && (len(out) != 1 || !strings.Contains(out[0], tc.err)):
			t.Errorf("%s with @arg %s: checker output %q, want one error with %q", tc.body, tc.typ, out, tc.err)
		}
		for _, cmd := range [][]string{{"DEL", "s"}, {"XADD", "s", "1-1", "f", "v"}, {"XGROUP", "CREATE", "s", "g", "0"}, {"XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"}} {
			if err := rc.Do(ctx, rc.B().Arbitrary(cmd[0]).Args(cmd[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("s").Arg(tc.arg).Build()).AsInt64()
		switch {
		case err != nil:
			t.Errorf("%s with %s: %v", tc.body, tc.arg, err)
		case tc.want == 10000 && got < tc.want:
			t.Errorf("%s with %s: the entry is idle %d days, want decades", tc.body, tc.arg, got)
		case tc.want != 10000 && got != tc.want:
			t.Errorf("%s with %s: Redis replied %d, want %d", tc.body, tc.arg, got, tc.want)
		}
	}
}
