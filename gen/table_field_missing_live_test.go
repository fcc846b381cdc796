package gen

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTableFieldMissingAgreesWithServer: a field that a table local the
// script never changes does not list (t[2] of local t = {ARGV[1]}, t.j of
// local t = {k = KEYS[1]}) is nil, which Redis refuses as an argument of
// redis.call at run time: the checker refuses it, naming the field. Not a
// field the constructor lists, nor one of a table it may change or build
// with a call last ({unpack(ARGV)}), nor one the script tests (if t[2]
// then), where the call may run only when it holds a value.
func TestTableFieldMissingAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key k\n-- @arg a string\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		want       []string // nil: accepted, and the server runs it
	}{
		{"an index past the list", "local t = {ARGV[1]}\nredis.call('SET', KEYS[1], t[2])",
			[]string{"scripts/x.lua:6:28: argument 2 of redis.call is nil (t[2]: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)"}},
		{"a name not listed", "local t = {v = ARGV[1]}\nredis.call('SET', KEYS[1], t.w)",
			[]string{"scripts/x.lua:6:28: argument 2 of redis.call is nil (t.w: local t lists no such field): Redis refuses it at run time (command arguments must be strings or numbers)"}},
		{"a listed index", "local t = {ARGV[1], 'x'}\nredis.call('SET', KEYS[1], t[2])", nil},
		{"a table changed", "local t = {ARGV[1]}\nt[2] = 'x'\nredis.call('SET', KEYS[1], t[2])", nil},
		{"a call last", "local t = {'x', unpack(ARGV)}\nredis.call('SET', KEYS[1], t[2])", nil},
		// A call last in parentheses gives one value: the field it fills
		// is listed.
		{"a call last in parentheses", "local t = {(tostring(ARGV[1]))}\nredis.call('SET', KEYS[1], t[1])", nil},
		{"unpack last in parentheses", "local t = {'x', (unpack(ARGV))}\nredis.call('SET', KEYS[1], t[2])", nil},
		// A field tested first: the call runs only when it holds a value.
		{"tested by an if", "local t = {ARGV[1]}\nif t[2] then redis.call('SET', KEYS[1], t[2]) end", nil},
		{"compared with nil", "local t = {v = ARGV[1]}\nif t.w ~= nil then redis.call('SET', KEYS[1], t.w) end", nil},
		{"left when missing", "local t = {v = ARGV[1]}\nif not t.w then return end\nredis.call('SET', KEYS[1], t.w)", nil},
		{"tested by an and", "local t = {v = ARGV[1]}\nlocal _ = t.w and redis.call('SET', KEYS[1], t.w)", nil},
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
