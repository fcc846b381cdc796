package gen

import (
	"context"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalElementAgreesWithServer: a local declared without a value
// (or assigned nil) and given one only on some paths may still hold nil in
// a returned table, where Redis ends the array, so the values after it are
// lost ({v, 5} reaches the caller as no values on a missing key). The
// checker warns of it, as of {x or nil, 5}; a local given a value on every
// path, or false in place of nil, is taken.
func TestNilLocalElementAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const exists = "if redis.call('EXISTS', KEYS[1]) == 1 then v = 'x' end\n"
	const lost = ": Redis ends an array at its first nil, so the caller then gets 0 values, not 2; give it a value on every path, or put false in place of nil (v or false): false reaches the caller as nil"
	for _, tc := range []struct {
		body, warn string
		n          int // the values the server replies on a missing key
	}{
		{"local v\n" + exists + "return {v, 5}",
			"scripts/x.lua:5:8: warning: value 1 of the returned table is v, a local that may hold nil there (declared without a value, or assigned nil, and given one only on some paths)" + lost, 0},
		{"local v = nil\n" + exists + "return {v, 5}",
			"scripts/x.lua:5:8: warning: value 1 of the returned table is v, a local that may hold nil there (declared without a value, or assigned nil, and given one only on some paths)" + lost, 0},
		{"local v = 'y'\nif redis.call('EXISTS', KEYS[1]) == 0 then v = nil end\nreturn {v, 5}",
			"scripts/x.lua:5:8: warning: value 1 of the returned table is v, a local that may hold nil there (declared without a value, or assigned nil, and given one only on some paths)" + lost, 0},
		{"local v\n" + exists + "if not v then v = 'z' end\nreturn {v, 5}", "", 2},
		{"local v = false\n" + exists + "return {v, 5}", "", 2},
		{"local v\n" + exists + "return {v or false, 5}", "", 2},
	} {
		src := "-- @key k\n-- @return {a string?, b int64}\n" + tc.body + "\n"
		_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := warnings.Error(); got != tc.warn {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.body, got, tc.warn)
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).ToArray()
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != tc.n {
			t.Errorf("%s: the server replied %d values, want %d", tc.body, len(vals), tc.n)
		}
	}
}
