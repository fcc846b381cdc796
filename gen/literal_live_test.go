package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// literalCases are calls with Lua literals in them, which the command-word
// tests (sent as strings in ARGV) cannot send: refusal is the error Redis
// answers and the checker's message quotes, "" for a call both take.
var literalCases = []struct {
	name, body, refusal string
}{
	{name: "timeout sent as its double, 2^63 milliseconds", body: "redis.call('BZMPOP', 9223372036854775, 1, KEYS[1], 'MIN')", refusal: "ERR timeout is negative"},
	{name: "timeout just under 2^63 milliseconds", body: "redis.call('BZMPOP', 9223372036854774, 1, KEYS[1], 'MIN')"},
	{name: "timeout negative", body: "redis.call('BLMPOP', -0.5, 1, KEYS[1], 'LEFT')", refusal: "ERR timeout is negative"},
	{name: "timeout -0", body: "redis.call('BLMPOP', -0, 1, KEYS[1], 'LEFT')"},
}

// TestLiteralsAgreeWithServer runs literalCases through the checker and on
// the test server: both must refuse each call with a refusal, with the
// same error (the checker's message quotes it), and take the others.
func TestLiteralsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range literalCases {
		src := "-- @key k\n-- @return none\n" + tc.body + "\nreturn nil\n"
		got := checkUsed(t, src)
		switch {
		case tc.refusal == "" && len(got) > 0:
			t.Errorf("%s: the checker refuses it: %q", tc.name, got)
		case tc.refusal != "" && (len(got) != 1 || !strings.Contains(got[0], "\""+tc.refusal)):
			t.Errorf("%s: the checker answers %q, want one error quoting %q", tc.name, got, tc.refusal)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{l}k").Build()).Error()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s: Redis refuses it: %v", tc.name, err)
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.refusal, "ERR "))):
			t.Errorf("%s: Redis answers %v, want %q", tc.name, err, tc.refusal)
		}
	}
}
