package gen

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicCountBranchesAgreeWithServer: two paths the checker cannot
// decide between, each giving a variadic list whole to a command that
// takes a fixed number of its values (RENAME of unpack(KEYS), two; GET of
// it, one), need counts no one count meets. The callers cannot tell which
// path runs: they must take every count some path runs (one key and two),
// and refuse those no path runs (none, three).
func TestVariadicCountBranchesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const head = "-- X does it.\n-- @key ks...\n-- @arg mode string\n-- @return none\n"
	for _, tc := range []struct {
		name, body string
		want       []string // the generated caller's tests
		runs       map[string][]string
	}{
		{"RENAME then GET", "if ARGV[1] == 'r' then redis.call('RENAME', unpack(KEYS)) else redis.call('GET', unpack(KEYS)) end",
			[]string{"if len(ks) == 0 {", "if len(ks) > 2 {"}, map[string][]string{"r": {"{t}a", "{t}b"}, "g": {"{t}a"}}},
		{"GET then RENAME", "if ARGV[1] == 'g' then redis.call('GET', unpack(KEYS)) else redis.call('RENAME', unpack(KEYS)) end",
			[]string{"if len(ks) == 0 {", "if len(ks) > 2 {"}, map[string][]string{"r": {"{t}a", "{t}b"}, "g": {"{t}a"}}},
		{"GET then KEYS[3]", "if ARGV[1] == 'g' then redis.call('GET', unpack(KEYS)) else redis.call('SET', KEYS[3], 'x') end",
			[]string{"if len(ks) == 0 {"}, map[string][]string{"r": {"{t}a", "{t}b", "{t}c"}, "g": {"{t}a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "\n"
			out, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			code := string(out["x.lua.go"])
			got := countChecks(code, "ks")
			if !slices.Equal(got, tc.want) {
				t.Errorf("the caller checks %q, want %q", got, tc.want)
			}
			for mode, keys := range tc.runs {
				err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(mode).Build()).Error()
				if err != nil && !rueidis.IsRedisNil(err) && !strings.Contains(err.Error(), "no such key") {
					t.Errorf("%s with %d keys: the server returned %v", mode, len(keys), err)
				}
			}
		})
	}
}

// countChecks is the tests of the length of list that code makes, each
// once, in order.
func countChecks(code, list string) []string {
	var got []string
	for _, c := range regexp.MustCompile(`if len\(`+list+`\) [=<>]+ [0-9]+ \{`).FindAllString(code, -1) {
		if !slices.Contains(got, c) {
			got = append(got, c)
		}
	}
	return got
}
