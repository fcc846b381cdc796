package scriptlock

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A semaphore's count is a string any client may have grown past what Go
// sets (Redisson's counts are longs, its adds add up): a count near 2^63
// read through a Lua number came back as -2^63, a deficit, while every
// acquisition succeeds. The reads say 2^53 - 1, as a latch's Count does.
func TestSemaphoreHugeCountReads(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	const want = maxCount
	for _, count := range []int64{math.MaxInt64, math.MaxInt64 - 100, 1 << 60} {
		v := strconv.FormatInt(count, 10)
		s := mustSem(t, c, "sem-"+v)
		node.Do(t, "SET", s.Key(), v)
		if n, err := s.AvailablePermits(ctx); err != nil || n != want {
			t.Errorf("Semaphore.AvailablePermits of a count of %d = %d, %v; want %d", count, n, err, int64(want))
		}
		p := mustPermits(t, c, "permits-"+v)
		node.Do(t, "SET", p.Key(), v)
		if n, err := p.AvailablePermits(ctx); err != nil || n != want {
			t.Errorf("PermitSemaphore.AvailablePermits of a count of %d = %d, %v; want %d", count, n, err, int64(want))
		}
		if st, err := p.State(ctx); err != nil || st.Available != want {
			t.Errorf("PermitSemaphore.State of a count of %d = %+v, %v; want %d available", count, st, err, int64(want))
		}
	}
}
