package scriptlock

import (
	"context"
	"testing"
	"time"
)

// The replica count the watchdog has taken again in the background (the
// failover guard is on by default, and the count grew older than
// guardRefresh) goes out on the Client's connection just before a renewal,
// on a link whose round trip (3.1 s, internal/netproxy's Delay) is longer
// than the count's 2 s bound and well within half the lease (8 s). rueidis
// sends a call on a connection with no other in flight at once and queues
// the calls that come meanwhile behind it, and a deadline that ends such a
// call closes the connection: with the count's bound a deadline, the
// renewal queued behind it failed with it (context deadline exceeded, 2 s
// after it was sent), and the one made again on a new connection came past
// the hold's loss deadline. The hook's pause puts the count first, as a
// loaded machine may. Margin: each reply comes 1.3 s before the deadline.
func TestWatchdogRenewalBesideCountOnSlowLink(t *testing.T) {
	t.Parallel()
	const lease, oneWay, watch = 8 * time.Second, 1550 * time.Millisecond, 14 * time.Second
	p := newProxied(t, WithWatchdog(lease, 0))
	l := mustMutex(t, p.c, "l")
	warm(t, l) // the lock's scripts, and the replica count
	p.c.wd.sendHook = func() { time.Sleep(300 * time.Millisecond) }
	p.px.Delay(oneWay)
	lctx, err := l.Lock(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	held, renewals, counted := time.Now(), p.c.wd.renewals.Load(), p.c.guard.checked.Load()
	select {
	case <-lctx.Done():
		t.Fatalf("the hold ended %v after its grant came back, after %d confirmed renewals: %v",
			time.Since(held).Round(time.Millisecond), p.c.wd.renewals.Load()-renewals, context.Cause(lctx))
	case <-time.After(watch):
	}
	if p.c.guard.checked.Load() == counted {
		t.Fatal("no replica count was taken again while the hold lasted")
	}
	if n := p.c.wd.renewals.Load() - renewals; n < 3 {
		t.Fatalf("%d renewals confirmed in %v", n, watch)
	}
}
