package scriptlock

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Redisson latch counts a long: a Java trySetCount(Long.MAX_VALUE) (a gate
// opened only by delete) is still counting for Go, whose Count and Await read
// it through a Lua number, and must not read as zero or below, which opens
// the latch on the Go side while Java's waiters wait.
func TestLatchJavaHugeCount(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	for _, count := range []int64{math.MaxInt64, math.MaxInt64 - 100, 1 << 60} {
		l := mustLatch(t, c, "gate-"+strconv.FormatInt(count, 10))
		java := newRedissonJava(node.Client(t), 3)
		if ok, err := java.latchTrySet(ctx, l.Key(), count); err != nil || ok != 1 {
			t.Fatalf("Java trySetCount(%d) = %d, %v", count, ok, err)
		}
		n, err := l.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n <= 0 {
			t.Fatalf("Count of a Java latch counting %d = %d: the latch reads as open", count, n)
		}
		// False, also when the machine is too loaded for the wait's
		// subscription to be confirmed within 100 ms past its end
		// (Unanswered): its read of the count was answered, not zero.
		if ok, err := l.AwaitTimeout(ctx, 100*time.Millisecond); ok || err != nil && !unansweredErr(err) {
			t.Fatalf("AwaitTimeout on a Java latch counting %d = %v, %v; want false: still counting", count, ok, err)
		}
	}
}
