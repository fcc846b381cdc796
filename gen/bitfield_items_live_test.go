package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestBitfieldReplyNilItemsAgreeWithServer: BITFIELD replies nil for an
// INCRBY or SET that overflows only after OVERFLOW FAIL; otherwise (WRAP,
// the default, or SAT) every element is an integer. Returning it for
// @return []int64 must pass then, and be refused with OVERFLOW FAIL, where
// the server gives nil for an overflow.
func TestBitfieldReplyNilItemsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const refused = "scripts/x.lua:4:8: BITFIELD replies an array whose elements may be nil (for what it does not find), but @return []int64 reads no nil element: the callers get a *DecodeError when one is missing; return a record of nullable fields ({a string?, b string?}) for a fixed number of values, or replace the nils (false in Lua) in the script (for i = 1, #t do if not t[i] then t[i] = '' end end)"
	for _, tc := range []struct {
		name, words, want string
		nils              bool // whether the server's reply holds nil elements
	}{
		{"wrapping", "'INCRBY', 'u8', 0, 300, 'GET', 'u8', 0", "", false},
		{"saturating", "'OVERFLOW', 'SAT', 'INCRBY', 'u8', 0, 300", "", false},
		{"failing", "'OVERFLOW', 'FAIL', 'INCRBY', 'u8', 0, 300", refused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X counts.\n-- @key k\n-- @return []int64\nreturn redis.call('BITFIELD', KEYS[1], " + tc.words + ")\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			nils := false
			for _, v := range vals {
				nils = nils || v.IsNil()
			}
			if len(vals) == 0 || nils != tc.nils {
				t.Errorf("the server replied %d elements, nil among them: %v; want %v", len(vals), nils, tc.nils)
			}
		})
	}
}
