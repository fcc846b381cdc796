package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilElementAgreesWithServer returns a table holding a reply that may
// be nil (GET, HGET) or a Lua boolean, where the decoder reads no nil (a
// list element, a field neither nullable nor bool): the checker must refuse
// it, and the server reply a nil element there on a missing key; a default,
// a nullable field or a bool field pass.
func TestNilElementAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		ret, body, want string
		nilAt           int // the element the server replies nil, -1 for none
	}{
		{"[]string", "return {'a', redis.call('GET', KEYS[1])}",
			"scripts/x.lua:3:8: returns an array with the reply of GET (a string or nil) at [1], which is nil when GET replies nil, but @return []string reads no nil there: the callers get a *DecodeError then; give it a default (redis.call(...) or '')", 1},
		{"{owner string, ttl int64}", "return {redis.call('HGET', KEYS[1], 'owner'), redis.call('PTTL', KEYS[1])}",
			"scripts/x.lua:3:8: returns an array with the reply of HGET (a string or nil) at [0], which is nil when HGET replies nil, but field owner of @return {owner string, ttl int64} reads no nil there: the callers get a *DecodeError then; declare it owner string?", 0},
		{"[]int64", "return {1, redis.call('EXISTS', KEYS[1]) == 1}",
			"scripts/x.lua:3:8: returns an array with a Lua boolean at [1], which is nil when it is false, but @return []int64 reads no nil there: the callers get a *DecodeError then; return 1 or 0 there (c and 1 or 0)", 1},
		{"[]string", "return {'a', redis.call('GET', KEYS[1]) or ''}", "", -1},
		{"{owner string?, ttl int64}", "return {redis.call('HGET', KEYS[1], 'owner'), redis.call('PTTL', KEYS[1])}", "", 0},
		{"{n int64, held bool}", "return {1, redis.call('EXISTS', KEYS[1]) == 1}", "", 1},
	} {
		src := "-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.body, got, tc.want)
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).ToArray()
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
			t.Errorf("%s: the server replied nil at [%d], want [%d]", tc.body, nilAt, tc.nilAt)
		}
	}
}

// TestEitherNilElementAgreesWithServer: an and/or giving a literal nil in a
// returned table ends Redis's array there, so the values after it are lost
// ({v or nil, 5} reaches the caller as no values on a missing key), which
// the checker warns of; false in its place reaches the caller as nil.
func TestEitherNilElementAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		body, warn string
		n          int // the values the server replies on a missing key
	}{
		{"return {redis.call('GET', KEYS[1]) or nil, 'b'}",
			"scripts/x.lua:3:8: warning: value 1 of the returned table is an and/or that may give nil: Redis ends an array at its first nil, so the caller then gets 0 values, not 2; put false in place of nil there (... or false): false reaches the caller as nil", 0},
		{"return {redis.call('GET', KEYS[1]) or false, 'b'}", "", 2},
		{"return {'a', redis.call('GET', KEYS[1]) or nil}", "", 1},
	} {
		src := "-- @key k\n-- @return {a string?, b string?}\n" + tc.body + "\n"
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
