package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEitherInReturnedTableAgreesWithServer puts and/or expressions in a
// returned table ({v or 0}, {c and 1 or 0}): each value they may give must
// fit the record field or list element that reads it, as for a returned
// and/or. The checker must refuse one that does not, and the server give
// that value there, on a key missing or set as the case says.
func TestEitherInReturnedTableAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body string
		set             bool   // the key holds "v" when the script runs
		want            string // the checker's error, "" for none
		str             bool   // whether the server replies a string at [0] (else an integer)
	}{
		{"a string with a default for an int64 field", "{n int64}", "return {redis.call('GET', KEYS[1]) or ''}", true,
			"scripts/x.lua:4:8: returns an array with an and/or that may give the reply of GET (a string) at [0], but field n of @return {n int64} needs an integer reply", true},
		{"a default number in a []string", "[]string", "return {redis.call('GET', KEYS[1]) or 0}", false,
			"scripts/x.lua:4:8: returns an array with an and/or that may give an integer (0) at [0], but @return []string needs a string reply for each element", false},
		{"a number or a string for a string field", "{s string}", "return {redis.call('EXISTS', KEYS[1]) == 1 and 1 or 'no'}", true,
			"scripts/x.lua:4:8: returns an array with an and/or that may give an integer (1) at [0], but field s of @return {s string} needs a string reply", false},
		{"a string default for a string field", "{s string}", "return {redis.call('GET', KEYS[1]) or ''}", false, "", true},
		{"numbers either way for an int64 field", "{n int64}", "return {redis.call('EXISTS', KEYS[1]) == 1 and 1 or 0}", true, "", false},
		{"a default never given", "[]string", "return {redis.call('INCR', KEYS[1]) .. '' or 0}", false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Del().Key("{t}k").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if tc.set {
				if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if vals[0].IsString() != tc.str {
				t.Errorf("the server replied %s at [0]; want a string: %v", vals[0].String(), tc.str)
			}
		})
	}
}
