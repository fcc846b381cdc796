package gen

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTableFieldInConditionAgreesWithServer: right of t.w and (or of not
// t.w or) written in a condition (if, elseif, while, until) runs only
// where t.w holds a value, as it does in any other expression: a field a
// never-changed table local does not list passed there is accepted, and
// the server, which never gets there, runs the script. Left of it, or
// after the condition, it is still refused.
func TestTableFieldInConditionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		head = "-- X does it.\n-- @key k\n-- @arg a string\n-- @return none\nlocal t = {v = ARGV[1]}\n"
		nilW = "argument 2 of redis.call is nil (t.w: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)"
		incr = "redis.call('INCRBY', KEYS[1], t.w) > 0"
	)
	for _, tc := range []struct {
		name, body string
		want       []string // nil: accepted, and the server runs it
	}{
		{"if, right of and", "if t.w and " + incr + " then return end", nil},
		{"if, right of not t.w or", "if not t.w or " + incr + " then return end", nil},
		{"elseif, right of and", "if ARGV[1] == 'x' then return elseif t.w and " + incr + " then return end", nil},
		{"while, right of and", "while t.w and " + incr + " do break end", nil},
		{"until, right of not t.w or", "repeat local n = 1 until not t.w or " + incr, nil},
		{"three deep", "if ARGV[1] and t.w and " + incr + " then return end", nil},
		{"left of and", "if " + incr + " and t.w then return end", []string{"scripts/x.lua:6:34: " + nilW}},
		{"after the condition", "if t.w and ARGV[1] then return end\nredis.call('SET', KEYS[1], t.w)", []string{"scripts/x.lua:7:28: " + nilW}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
			refused, err := evalRefused(ctx, rc, src, []string{"{t}k"}, []string{"a"}, "must be strings or integers")
			if refused != (tc.want != nil) {
				t.Errorf("the server returned %v", err)
			}
		})
	}
}
