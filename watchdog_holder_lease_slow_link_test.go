package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// failedRenewals counts the renewals the watchdog's rounds report failed.
type failedRenewals struct {
	NopObserver
	n atomic.Int64
}

func (f *failedRenewals) Renewal(e RenewalEvent) { f.n.Add(int64(e.Failed)) }

// A LeanMutex's TryLock refused by another owner's hold asks the holder's
// lease (PTTL), bounded by waitOverrun (100 ms), on the Client's connection
// just before a renewal, on a link whose round trip (300 ms,
// internal/netproxy's Delay) is longer than that bound. rueidis sends a
// call on a connection with no other in flight at once and queues the
// calls that come meanwhile behind it, and a deadline that ends such a call
// closes the connection: with the ask's bound a deadline, the renewal
// queued behind it failed with it (on a link whose round trip is a good
// part of the lease, the one made again came too late, and the hold was
// lost). The hook holds the renewal back until the ask is on its way (the
// TryLock's round trip and 50 ms, half the ask's bound).
func TestWatchdogRenewalBesideHolderLeaseAskOnSlowLink(t *testing.T) {
	t.Parallel()
	const lease, every, oneWay = 3 * time.Second, time.Second, 150 * time.Millisecond
	obs := &failedRenewals{}
	p := newProxied(t, WithWatchdog(lease, every), WithObserver(obs))
	l := mustMutex(t, p.c, "l")
	other := mustLean(t, p.c, "other")
	warm(t, l)
	warm(t, other)
	holdDirect(t, p, lockCases[2], "other")
	tctx := testCtx(t, 20*time.Second)
	var armed atomic.Bool
	asked := make(chan error, 1)
	p.c.wd.sendHook = func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		go func() {
			_, err := other.TryLock(tctx, 0)
			asked <- err
		}()
		time.Sleep(2*oneWay + 50*time.Millisecond)
	}
	p.px.Delay(oneWay)
	lctx, err := l.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	renewed := func(n int64) {
		t.Helper()
		for at := p.c.wd.renewals.Load(); p.c.wd.renewals.Load() < at+n; time.Sleep(10 * time.Millisecond) {
			if lctx.Err() != nil {
				t.Fatalf("the hold ended: %v", context.Cause(lctx))
			}
		}
	}
	renewed(1)
	armed.Store(true)
	if err := <-asked; err == nil {
		t.Fatal("TryLock acquired a lock another owner holds")
	}
	renewed(2)
	if n := obs.n.Load(); n != 0 {
		t.Fatalf("%d renewals failed beside the holder's lease ask", n)
	}
}
