package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSortReplyNilItemsAgreeWithServer: SORT and SORT_RO reply the elements
// they sort, none nil, unless a GET pattern other than # names keys that may
// be missing: returning them for @return []string must pass without GET (a
// cluster-safe script cannot use GET at all), and be refused with GET w_*,
// where the server gives nil for a missing key.
func TestSortReplyNilItemsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Rpush().Key("{t}k").Element("b", "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const refused = "SORT replies an array whose elements may be nil (for what it does not find), but @return []string reads no nil element: the callers get a *DecodeError when one is missing; return a record of nullable fields ({a string?, b string?}) for a fixed number of values, or replace the nils (false in Lua) in the script (for i = 1, #t do if not t[i] then t[i] = '' end end)"
	for _, tc := range []struct {
		name, flags, call, want string
		nils                    bool // whether the server's reply holds nil elements
	}{
		{"SORT", "", "redis.call('SORT', KEYS[1], 'ALPHA')", "", false},
		{"SORT with a limit", "", "redis.call('SORT', KEYS[1], 'LIMIT', 0, tonumber(ARGV[1]) and ARGV[1] or 10, 'ALPHA', 'DESC')", "", false},
		{"SORT_RO", "", "redis.call('SORT_RO', KEYS[1], 'ALPHA')", "", false},
		{"SORT GET #", "-- @cluster-unsafe\n", "redis.call('SORT', KEYS[1], 'ALPHA', 'GET', '#')", "", false},
		{"SORT GET a pattern", "-- @cluster-unsafe\n", "redis.call('SORT', KEYS[1], 'ALPHA', 'GET', 'w_*')", refused, true},
		// @cluster-unsafe: the word may also be STORE (see TestKeywordArgRefused).
		{"SORT with a word it cannot read", "-- @cluster-unsafe\n", "redis.call('SORT', KEYS[1], ARGV[1])", refused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X sorts.\n-- @key k\n-- @arg n string\n" + tc.flags + "-- @return []string\nreturn " + tc.call + "\n"
			want := ""
			if tc.want != "" {
				want = "scripts/x.lua:" + map[bool]string{true: "6", false: "5"}[tc.flags != ""] + ":8: " + tc.want
			}
			if !strings.Contains(tc.call, "ARGV[1]") {
				src = strings.Replace(src, "-- @arg n string\n", "", 1)
				want = strings.Replace(want, ":6:8:", ":5:8:", 1)
			}
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("ALPHA").Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			nils := len(vals) < 2
			for _, v := range vals {
				nils = nils || v.IsNil()
			}
			if nils != tc.nils {
				t.Errorf("the server replied %d elements, nil among them: %v; want %v", len(vals), nils, tc.nils)
			}
		})
	}
}
