package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicIndexOnAPathAgreesWithServer: ARGV[n] past the fixed
// arguments that reaches redis.call on some paths only, the right of an
// and/or written in place (c and 'z' or ARGV[3]), is nil there when the
// list is short, and Redis fails the call after the script's earlier
// writes: the generated callers must refuse such a list, as for a local
// given ARGV[n] on a path. Not when the left side tests the element (ARGV[3]
// or 'z' gives 'z' for a short list) or is never false.
func TestVariadicIndexOnAPathAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg mark string\n-- @arg rest... string\n-- @return none\nredis.call('SET', KEYS[1] .. ':m', ARGV[1])\n"
	for _, tc := range []struct {
		name, body string
		check      string // the generated caller's test, "" for none
	}{
		{"the right of an or", "redis.call('SET', KEYS[1], ARGV[1] == 'x' and 'z' or ARGV[3])", "if len(rest) < 2 {"},
		{"the right of an and", "redis.call('SET', KEYS[1], ARGV[1] ~= 'x' and ARGV[3])", "if len(rest) < 2 {"},
		{"tested on the left", "redis.call('SET', KEYS[1], ARGV[3] and ARGV[3] or 'z')", ""},
		{"a default", "redis.call('SET', KEYS[1], ARGV[3] or 'z')", ""},
		{"another element first", "redis.call('SET', KEYS[1], ARGV[2] or ARGV[3])", "if len(rest) == 0 {"},
		{"a literal first", "redis.call('SET', KEYS[1], 'z' or ARGV[3])", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			checkShortListCaller(t, src, tc.check)
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"m", "a"}, "must be strings or integers")
			if refused != (tc.check == "if len(rest) < 2 {") {
				t.Errorf("a list of one: the server returned %v", err)
			}
		})
	}
}
