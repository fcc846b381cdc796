package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestRedLockGiveBackNotHeldUpByLogger: a RedLock that loses its quorum
// gives back the nodes that still hold it however long the logger takes to
// write the loss: they were given back only once the record was written, so
// with a log sink that stalled their watchdogs renewed them for as long as
// it stalled, a lock nobody owned any more keeping those nodes from others.
func TestRedLockGiveBackNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	sink := stuckLog{release: make(chan struct{})}
	nodes, cs, pxs := proxiedNodes(t, 3, WithLogger(slog.New(sink)))
	t.Cleanup(func() { close(sink.release) }) // before the Clients close
	ctx := testCtx(t, 30*time.Second)
	const lease = 2 * time.Second
	r := mustRedLock(t, "job-stuck-log-giveback", cs, WithWatchdog(lease, 600*time.Millisecond),
		WithClockDrift(0.4, 0), WithNodeTimeout(300*time.Millisecond))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pxs[1].Freeze()
	pxs[2].Freeze()
	defer pxs[1].Thaw()
	defer pxs[2].Thaw()
	select {
	case <-lctx.Done():
		if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
			t.Fatalf("lock context ended with %v, want ErrLockLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lock context alive 5s after two of three nodes stopped answering")
	}
	key := r.nodes[0].Key()
	limit := time.Now().Add(2 * lease)
	for {
		n, err := nodes[0].Do(t, "EXISTS", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("the node still holding the lost RedLock kept it %s after the loss (renewed by its watchdog), the logger's write of the loss stuck", 2*lease)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
