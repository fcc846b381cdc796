package scriptlock

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A count past 2^53 - 1, which Go never sets but another client may have
// grown, is drained whole and answered as 2^53 - 1, as AvailablePermits
// reads it: read through a Lua number, a count near 2^63 came back as
// -2^63, a deficit, though every permit was taken.
func TestSemaphoreDrainHugeCount(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	for _, count := range []int64{math.MaxInt64, math.MaxInt64 - 100, 1<<60 + 1, maxCount + 1} {
		v := strconv.FormatInt(count, 10)
		s := mustSem(t, c, "drain-"+v)
		node.Do(t, "SET", s.Key(), v)
		if n, err := s.DrainPermits(ctx); err != nil || n != maxCount {
			t.Errorf("DrainPermits of a count of %d = %d, %v; want %d", count, n, err, int64(maxCount))
		}
		if n := countAt(t, node, s.Key()); n != 0 {
			t.Errorf("count after DrainPermits of %d = %d; want 0", count, n)
		}
	}
}

// A drain of a count Redisson's addPermits wrote as a float (its sums of
// 10^17 or more are) records the permits it took as an integer, so that a drain of
// unknown outcome gives them back: "1.152921504606847e+18" was recorded as
// is, which the give-back read as no permits taken, and they were lost.
func TestSemaphoreDrainFloatCountGivenBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "drain-float")
	node.Do(t, "SET", s.Key(), "1.152921504606847e+18")
	if n, err := s.DrainPermits(ctx); err != nil || n != maxCount {
		t.Fatalf("DrainPermits = %d, %v; want %d", n, err, int64(maxCount))
	}
	records, err := node.Do(t, "KEYS", "redisson_sc_latch:*").AsStrSlice()
	if err != nil || len(records) != 1 {
		t.Fatalf("drain records: %q, %v", records, err)
	}
	// The drain's outcome taken as unknown: its permits go back.
	if _, err := s.undoOnce(ctx, records[0], 0); err != nil {
		t.Fatal(err)
	}
	if v, err := node.Do(t, "GET", s.Key()).ToString(); err != nil || v != "1152921504606846976" {
		t.Fatalf("count after the drain was given back = %q, %v; want 1152921504606846976", v, err)
	}
}
