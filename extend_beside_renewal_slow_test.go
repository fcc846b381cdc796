package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Extend to a shorter lease, checked while its hold had a lease of its
// own, is held up on its way (a slow link) while a re-entry without a lease
// hands the hold to the watchdog and the watchdog's renewal goes out: the
// server runs the renewal first and the Extend last, so the lock ends with
// the Extend's shorter lease. Once the link stops carrying anything, the
// lock context must end before the lock's key expires on the server: the
// Client never counts on a longer lease than the server has.
//
// The renewal's reply comes first (the server ran it first), while the
// Extend is in flight: it must not move the deadline to the watchdog's
// longer lease. Two things keep the calls overlapping on the server as
// named: the renewal's script is loaded beforehand (one answered NOSCRIPT
// is sent again a round trip later, and ran after the Extend), and the
// connection pipelines from the first call on (rueidis's sync mode writes
// the Extend only once the renewal's reply is in, and the two no longer
// overlap).
func TestExtendShorterBesideRenewalSlowLink(t *testing.T) {
	t.Parallel()
	const oneWay = 150 * time.Millisecond
	const long, short = 3 * time.Second, 2500 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true,
		PipelineMultiplex: -1, AlwaysPipelining: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c := newTestClient(t, rc, WithWatchdog(long, 0))
	m := mustMutex(t, c, "l")
	ctx := testCtx(t, 30*time.Second)
	warmShared(t, m)
	warmRenewal(t, c, mustMutex(t, c, "warm"))
	octx := WithOwner(ctx, "job")
	outer, err := m.LockWithLease(octx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, outer, 10*time.Second); err != nil { // script loaded
		t.Fatal(err)
	}
	px.Delay(oneWay)
	var armed, sendArmed atomic.Bool
	marked, gate := make(chan struct{}), make(chan struct{})
	sent := make(chan struct{})
	c.setLeaseMarkHook(func() {
		if armed.CompareAndSwap(true, false) {
			close(marked)
			<-gate
		}
	})
	c.wd.sendHook = func() {
		if sendArmed.CompareAndSwap(true, false) {
			close(sent)
		}
	}
	armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- m.Extend(ctx, outer, short) }()
	<-marked
	sendArmed.Store(true)
	if _, err := m.Lock(octx); err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal went out")
	}
	time.Sleep(oneWay / 3) // the renewal is on its way
	close(gate)
	if err := <-done; err != nil {
		t.Fatalf("Extend: %v", err)
	}
	// The renewal's reply came before the Extend's. The renewal the
	// shorter lease has the watchdog make at once (renewSoon) must not
	// reach the server: it would set the longer lease again, and hide a
	// deadline the first renewal's reply moved past the Extend's lease.
	px.Freeze()
	defer px.Thaw()
	end := time.Now().Add(4 * long)
	for time.Now().Before(end) {
		alive := outer.Err() == nil
		n, err := node.Do(t, "EXISTS", m.Key()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if alive {
				t.Fatalf("the lock's key expired on the server while its lock context was alive")
			}
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the lock's key did not expire")
}

// warmRenewal holds l until the watchdog has renewed it once, so that the
// server has the script of l's renewals.
func warmRenewal(t *testing.T, c *Client, l Locker) {
	t.Helper()
	lctx, err := l.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	for n := c.wd.renewals.Load(); c.wd.renewals.Load() == n; time.Sleep(10 * time.Millisecond) {
		if lctx.Err() != nil {
			t.Fatalf("warm-up hold lost: %v", context.Cause(lctx))
		}
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatalf("warm-up Unlock: %v", err)
	}
}
