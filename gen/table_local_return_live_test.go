package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedTableLocalScalarAgreesWithServer: a local holding a table
// (whatever the script puts in it), returned, reaches the caller as an
// array, as a table written in the return does: a scalar @return never reads
// it, and the callers get a *DecodeError on every call. The checker must
// refuse it, and pass a table Redis replies otherwise ({ok = ...}, also set
// after the constructor) and a local no longer holding the table.
func TestReturnedTableLocalScalarAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body, want string
		arr                   bool // whether the server replies an array
	}{
		{"an int64", "int64", "local t = {redis.call('INCR', KEYS[1])}\nreturn t",
			"scripts/x.lua:5:8: returns t, assigned at line 4: an array (a table), but @return int64 needs an integer reply", true},
		{"a string filled later", "string?", "local t = {}\nt[#t + 1] = ARGV[1]\nreturn t",
			"scripts/x.lua:6:8: returns t, assigned at line 4: an array (a table), but @return string? needs a string reply", true},
		{"a list", "[]string", "local t = {}\nt[#t + 1] = ARGV[1]\nreturn t", "", true},
		{"a status table", "string", "local t = {ok = 'DONE'}\nreturn t", "", false},
		{"a status set later", "string", "local t = {}\nt.ok = 'DONE'\nreturn t", "", false},
		{"made a string", "string", "local t = {ARGV[1]}\nt = table.concat(t, ',')\nreturn t", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @arg a string\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			keys := []string{"{t}k"}
			if !strings.Contains(tc.body, "KEYS[1]") {
				src = strings.Replace(src, "-- @key k\n", "", 1)
				keys = []string{}
			}
			if !strings.Contains(tc.body, "ARGV[1]") {
				src = strings.Replace(src, "-- @arg a string\n", "", 1)
			}
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			v, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg("7").Build()).ToAny()
			if err != nil {
				t.Fatalf("the server replied %v", err)
			}
			if _, arr := v.([]any); arr != tc.arr {
				t.Errorf("the server replied %#v; want an array: %v", v, tc.arr)
			}
		})
	}
}
