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
