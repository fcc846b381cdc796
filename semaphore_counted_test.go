package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Well under the 2 s fallback poll: a waiter stranded until its poll fails,
// with room for a loaded 2-core machine.
const countedBound = 700 * time.Millisecond

// A release of a PermitSemaphore wakes one of two local waiters, which takes
// the permit with a short lease and keeps it. No message announces that
// lease ending: the other waiter, which the release did not wake, last heard
// of a lease a minute long, and must still take the permit when the short
// one ends, not at its fallback poll.
func TestPermitShortLeaseAfterCountedWake(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "short-lease")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 150 * time.Millisecond
	got := make(chan time.Time, 2)
	base := acquireCalls(t, node)
	for i := range 2 {
		go func() {
			if _, err := p.Acquire(ctx, lease); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		settleWaiters(t, node, c, p.channel, i+1, base, int64(2*(i+1)))
	}
	if err := p.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	select {
	case first = <-got:
	case <-time.After(countedBound):
		t.Fatalf("no waiter acquired within %s of the release", countedBound)
	}
	select {
	case second := <-got:
		t.Logf("second waiter acquired %s after the first, whose lease was %s", second.Sub(first).Round(time.Millisecond), lease)
	case <-time.After(lease + countedBound):
		t.Fatalf("the first waiter's %s lease ended; the other waiter did not acquire within %s of its acquisition", lease, lease+countedBound)
	}
}
