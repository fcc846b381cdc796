package gen

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTableFieldTestedAgreesWithServer: a field a never-changed table local
// does not list is nil wherever it is read; a test of it (if t.w then, t.w
// and, t.w == 'x') lets the script pass it only where the test shows it
// holds a value: in the if's body, after an early exit when it is missing,
// right of the and. After the if, or after a comparison whose outcome the
// script keeps, it is still nil: the checker refuses it there, and the
// server refuses the call.
func TestTableFieldTestedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const (
		head = "-- X does it.\n-- @key k\n-- @arg a string\n-- @return none\nlocal t = {v = ARGV[1]}\n"
		nilW = "argument 2 of redis.call is nil (t.w: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)"
	)
	for _, tc := range []struct {
		name, body string
		want       []string // nil: accepted, and the server runs it
	}{
		{"after the if that tests it", "if t.w then redis.call('SET', KEYS[1], t.w) end\nredis.call('SET', KEYS[1], t.w)",
			[]string{"scripts/x.lua:7:28: " + nilW}},
		{"after a comparison", "local same = t.w == 'x'\nredis.call('SET', KEYS[1], t.w)",
			[]string{"scripts/x.lua:7:28: " + nilW}},
		{"after an and", "local _ = t.w and 1\nredis.call('SET', KEYS[1], t.w)",
			[]string{"scripts/x.lua:7:28: " + nilW}},
		{"in the else of the if that tests it", "if t.w then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], t.w) end",
			[]string{"scripts/x.lua:6:72: " + nilW}},
		{"after an early exit on nil", "if t.w == nil then return end\nredis.call('SET', KEYS[1], t.w)", nil},
		{"after an else that exits", "if t.w then redis.call('DEL', KEYS[1]) else return end\nredis.call('SET', KEYS[1], t.w)", nil},
		{"right of not t.w or", "local _ = not t.w or redis.call('SET', KEYS[1], t.w)", nil},
		{"tested by type", "if type(t.w) ~= 'nil' then redis.call('SET', KEYS[1], t.w) end", nil},
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
