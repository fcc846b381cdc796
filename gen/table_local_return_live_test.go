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
// after the constructor, by a key the checker cannot read, by a function it
// is passed to or through an alias) and a local no longer holding the
// table.
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
		{"a status set by a name", "string", "local t = {}\nlocal f = 'ok'\nt[f] = ARGV[1]\nreturn t", "", false},
		{"a status set by rawset", "string", "local t = {}\nrawset(t, 'ok', ARGV[1])\nreturn t", "", false},
		{"a status set by a function", "string", "local t = {}\nlocal function mark(x) x.ok = ARGV[1] end\nmark(t)\nreturn t", "", false},
		{"a status set through an alias", "string", "local t = {}\nlocal u = t\nu.ok = ARGV[1]\nreturn t", "", false},
		{"filled by table.insert", "string", "local t = {}\ntable.insert(t, ARGV[1])\nreturn t",
			"scripts/x.lua:6:8: returns t, assigned at line 4: an array (a table), but @return string needs a string reply", true},
		{"filled in a for", "string", "local t = {}\nfor i = 1, 2 do\n  t[i] = ARGV[1]\nend\nreturn t",
			"scripts/x.lua:8:8: returns t, assigned at line 4: an array (a table), but @return string needs a string reply", true},
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

// TestReturnedTableLocalElemsAgreeWithServer: a table local the script
// never changes, returned, replies the values its constructor listed, as
// the constructor returned itself does: each is checked against the record
// field or list element that reads it. The server replies them so.
func TestReturnedTableLocalElemsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body, want string
		nilAt                 int // the element the server replies nil (on a missing key), -1 for none
	}{
		{"a nil reply in a list", "[]string", "local t = {redis.call('GET', KEYS[1]), 'x'}\nreturn t",
			"scripts/x.lua:5:8: returns an array with the reply of GET (a string or nil) at [0], which is nil when GET replies nil, but @return []string reads no nil there: the callers get a *DecodeError then; give it a default (redis.call(...) or '')", 0},
		{"a string in an int64 field", "{a int64, b int64}", "local t = {'x', redis.call('INCR', KEYS[1])}\nreturn t",
			"scripts/x.lua:5:8: returns an array with a string (\"x\") at [0], but field a of @return {a int64, b int64} needs an integer reply", -1},
		{"too many values", "{a string}", "local t = {'x', 'y'}\nreturn t",
			"scripts/x.lua:4:8: returns an array of 2 values, but @return {a string} has 1 fields", -1},
		{"fits", "{a string?, b int64}", "local t = {redis.call('GET', KEYS[1]), 5}\nreturn t", "", 0},
		{"changed after", "[]string", "local t = {redis.call('GET', KEYS[1]), 'x'}\nt[1] = 'y'\nreturn t", "", -1},
		{"passed on", "[]string", "local t = {redis.call('GET', KEYS[1]), 'x'}\nlocal function fill(u) u[1] = 'y' end\nfill(t)\nreturn t", "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			keys := []string{"{t}missing"}
			if !strings.Contains(tc.body, "KEYS[1]") {
				src = strings.Replace(src, "-- @key k\n", "", 1)
				keys = []string{}
			}
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			nilAt := -1
			for i := range vals {
				if vals[i].IsNil() {
					nilAt = i
					break
				}
			}
			if nilAt != tc.nilAt {
				t.Errorf("the server replied nil at [%d], want [%d]", nilAt, tc.nilAt)
			}
		})
	}
}
