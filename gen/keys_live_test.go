package gen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestKeyPositionsAgreeWithServer compares keyPositions with COMMAND
// GETKEYS for the commands whose key specs leave keys unknown or
// incomplete (SORT's STORE, MIGRATE's KEYS), which the checker finds as
// Redis does.
func TestKeyPositionsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, line := range []string{
		"SORT k", "SORT k ALPHA", "SORT k STORE d", "SORT k LIMIT 0 1 STORE d", "SORT k BY nosort GET # STORE d",
		"SORT k STORE d STORE e", "SORT k GET STORE", "SORT k store d DESC",
		"MIGRATE h 6380 a 0 100", "MIGRATE h 6380 a 0 100 COPY REPLACE", "MIGRATE h 6380 _ 0 100 KEYS a b",
		"MIGRATE h 6380 _ 0 100 COPY AUTH pw KEYS a", "MIGRATE h 6380 _ 0 100 AUTH2 u p REPLACE keys a b c",
	} {
		words := strings.Fields(line)
		for i := range words {
			if words[i] == "_" {
				words[i] = ""
			}
		}
		got, err := rc.Do(ctx, rc.B().CommandGetkeys().Command(words[0]).Arg(words[1:]...).Build()).AsStrSlice()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		info, _ := lookupCommand(words[0])
		literal := make([]bool, len(words))
		for i := range literal {
			literal[i] = true
		}
		pos, complete := info.keyPositions(words, literal)
		var keys []string
		for _, p := range pos {
			keys = append(keys, words[p])
		}
		if !slices.Equal(keys, got) {
			t.Errorf("%s: keyPositions gives %q (complete %v), the server %q", line, keys, complete, got)
		}
	}
}
