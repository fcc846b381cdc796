package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestErrorTableRaisedAgreesWithServer: error({err = 'CODE ...'}) fails the
// script with that error reply, as returning the table does (Redis appends
// where the script failed), so the callers match its code to the sentinel:
// the checker must take it as the code, declared or not, and not as
// error('...'), which reaches the caller as ERR user_script:....
func TestErrorTableRaisedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, raise, err, code string
	}{
		{"declared", "error({err = 'NOT_HELD the lock is gone'})", "", "NOT_HELD"},
		{"through error_reply", "error(redis.error_reply('NOT_HELD the lock is gone'))", "", "NOT_HELD"},
		{"undeclared", "error({err = 'GONE the lock is gone'})",
			"scripts/x.lua:6:53: error code GONE is not declared with @error (-- @error GONE <message>; callers get ErrGone)", "GONE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X fails from a function.\n-- @key k\n-- @error NOT_HELD not held\n-- @return int64\n" +
				"local function check()\n" +
				"  if redis.call('EXISTS', KEYS[1]) == 0 then " + tc.raise + " end\n" +
				"end\ncheck()\nreturn 1\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.err {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.err)
			}
			err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).Error()
			re, ok := rueidis.IsRedisErr(err)
			if !ok {
				t.Fatalf("the server replied %v, not an error", err)
			}
			if code, _, _ := strings.Cut(re.Error(), " "); code != tc.code {
				t.Errorf("the server replied %q: code %q, want %q", re.Error(), code, tc.code)
			}
		})
	}
}
