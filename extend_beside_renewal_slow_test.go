package scriptlock

import (
	"sync/atomic"
	"testing"
	"time"

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
func TestExtendShorterBesideRenewalSlowLink(t *testing.T) {
	t.Parallel()
	const oneWay = 150 * time.Millisecond
	const long, short = 3 * time.Second, 2500 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	c := newTestClient(t, px.Client(t), WithWatchdog(long, 0))
	m := mustMutex(t, c, "l")
	ctx := testCtx(t, 30*time.Second)
	warmShared(t, m)
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
	c.leaseMarkHook = func() {
		if armed.CompareAndSwap(true, false) {
			close(marked)
			<-gate
		}
	}
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
	time.Sleep(3 * oneWay) // every reply is in
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
