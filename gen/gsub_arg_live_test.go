package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGsubArgAgreesWithServer: string.gsub gives the string and the count
// of its replacements, and as the last argument of redis.call both are
// passed: the checker must refuse it, and the server fail the call (SET
// reads the count as an option); in parentheses it gives the string alone.
func TestGsubArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		arg, want string
	}{
		{"ARGV[1]:gsub(' ', '_')", "scripts/x.lua:4:28: argument 2 of SET is a call of gsub, which gives two values, the string and the count of its replacements: SET gets both, the count as one more argument; wrap the call in parentheses to pass the string alone ((s:gsub(...)))"},
		{"string.gsub(ARGV[1], ' ', '_')", "scripts/x.lua:4:28: argument 2 of SET is a call of gsub, which gives two values, the string and the count of its replacements: SET gets both, the count as one more argument; wrap the call in parentheses to pass the string alone ((s:gsub(...)))"},
		{"(ARGV[1]:gsub(' ', '_'))", ""},
	} {
		src := "-- @key k\n-- @arg name string\n-- @return none\nredis.call('SET', KEYS[1], " + tc.arg + ")\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.arg, got, tc.want)
		}
		err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("a b").Build()).Error()
		if rueidis.IsRedisNil(err) {
			err = nil // the script returns nothing
		}
		if failed := err != nil; failed != (tc.want != "") {
			t.Errorf("%s: the server replied %v", tc.arg, err)
		}
	}
}
