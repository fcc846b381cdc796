package scriptlock

import (
	"context"
	"testing"
	"time"
)

// Holds of every kind of renewal on one Client (Mutex and FairMutex share
// MutexRenew; RWMutex write, RWMutex read and LeanMutex each have their
// own), due together, renewed by the watchdog over a link whose round trip
// (2 s, internal/netproxy's Delay) is well within what the lease (8 s)
// leaves after the renewal interval (2 s). Each round's renewals go out
// together: sent one kind after another, each kind's after the reply to the
// one before, the round took a round trip per kind, and the kinds sent last
// had their replies past the loss deadline the grant set (7.8 s after it
// was sent, the fourth kind's reply 10 s after), and were lost though the
// server had renewed them. Margin: each reply comes 3.8 s before the
// deadline.
func TestWatchdogRenewsKindsTogetherOnSlowLink(t *testing.T) {
	t.Parallel()
	const lease, every, oneWay, watch = 8 * time.Second, 2 * time.Second, time.Second, 12 * time.Second
	p := newProxied(t, WithWatchdog(lease, every))
	rw := mustRW(t, p.c, "rw-read")
	locks := []struct {
		name string
		l    Locker
	}{
		{"mutex", mustMutex(t, p.c, "mutex")},
		{"fair", mustFair(t, p.c, "fair")},
		{"rw-write", mustRW(t, p.c, "rw-write")},
		{"rw-read", rw.RLocker()},
		{"lean", mustLean(t, p.c, "lean")},
	}
	for _, lk := range locks {
		warm(t, lk.l) // the locks' scripts and connections, not the renewals'
	}
	// Taken together on the fast link, so due together: one round renews
	// them all, each kind in its own group.
	ctxs := make([]context.Context, len(locks))
	for i, lk := range locks {
		lctx, err := lk.l.Lock(testCtx(t, time.Minute))
		if err != nil {
			t.Fatalf("%s: %v", lk.name, err)
		}
		ctxs[i] = lctx
	}
	p.px.Delay(oneWay)
	held, renewals := time.Now(), p.c.wd.renewals.Load()
	for time.Now().Before(held.Add(watch)) {
		for i, lctx := range ctxs {
			if lctx.Err() != nil {
				t.Fatalf("the %s hold ended %v after the link was slowed, after %d confirmed renewals: %v",
					locks[i].name, time.Since(held).Round(time.Millisecond), p.c.wd.renewals.Load()-renewals, context.Cause(lctx))
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A round every round trip after the first interval: 5 in 12 s, each
	// renewing every hold. Each key's expiry, read past the server, was
	// moved on: the grant's lease ended 12 s ago.
	if n := p.c.wd.renewals.Load() - renewals; n < int64(3*len(locks)) {
		t.Fatalf("%d renewals confirmed in %v for %d holds", n, watch, len(locks))
	}
	for _, lk := range locks {
		key := p.key(t, lk.name)
		ttl, err := p.node.Do(t, "PTTL", key).AsInt64()
		if err != nil {
			t.Fatalf("PTTL %s: %v", key, err)
		}
		if ttl < (lease / 4).Milliseconds() {
			t.Fatalf("the %s hold's key has %d ms left of its %v lease: its renewals were not confirmed", lk.name, ttl, lease)
		}
	}
}
