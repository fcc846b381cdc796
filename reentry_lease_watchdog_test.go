package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hold the watchdog renews, re-entered by its owner with a short explicit
// lease, lasts as long as the outer hold: the re-entry sets the lock's expiry
// to its lease (Redisson's rule), and the watchdog of the outer hold keeps
// renewing it with the watchdog lease. Neither the outer context nor the key
// may end while the outer hold lasts, before or after the inner Unlock.
func TestWatchdogHoldReenteredWithShortLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(3*time.Second, 0))
	const short = 200 * time.Millisecond
	type lockFns struct {
		name   string
		key    string
		lock   func(context.Context) (context.Context, error)
		leased func(context.Context, time.Duration) (context.Context, error)
		unlock func(context.Context) error
	}
	m := mustMutex(t, c, "wd-short-mutex")
	f := mustFair(t, c, "wd-short-fair")
	rr := mustRW(t, c, "wd-short-read")
	rw := mustRW(t, c, "wd-short-write")
	for _, tc := range []lockFns{
		{"mutex", m.Key(), m.Lock, m.LockWithLease, m.Unlock},
		{"fair", f.Key(), f.Lock, f.LockWithLease, f.Unlock},
		{"read", rr.Key(), rr.RLock, rr.RLockWithLease, rr.RUnlock},
		{"write", rw.Key(), rw.Lock, rw.LockWithLease, rw.Unlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 30*time.Second)
			outer, err := tc.lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := tc.leased(outer, short)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // past the short lease and a renewal
			if err := context.Cause(outer); err != nil {
				t.Errorf("the outer watchdog hold ended under its re-entry with a %s lease: %v", short, err)
			}
			if ttl, _ := node.Do(t, "PTTL", tc.key).AsInt64(); ttl <= 0 {
				t.Errorf("the lock is gone (PTTL %d) while the outer watchdog hold lasts", ttl)
			}
			_ = tc.unlock(inner)
			time.Sleep(2500 * time.Millisecond)
			if err := context.Cause(outer); err != nil {
				t.Errorf("after the inner Unlock, the outer watchdog hold ended: %v", err)
			}
			if ttl, _ := node.Do(t, "PTTL", tc.key).AsInt64(); ttl <= 0 {
				t.Errorf("after the inner Unlock, the lock is gone (PTTL %d) while the outer watchdog hold lasts", ttl)
			}
			if err := tc.unlock(outer); err != nil {
				t.Errorf("outer Unlock: %v", err)
			}
		})
	}
}

// A re-entry with a short lease sent as the watchdog hold's lock was deleted
// (a ForceUnlock elsewhere) is granted afresh with the watchdog's lease it
// set: its hold ends at its own lease, and gives back the longer one.
func TestWatchdogReentryGrantedAfreshGivesLongerLeaseBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(10*time.Second, 0))
	ctx := testCtx(t, 30*time.Second)
	const short = 300 * time.Millisecond
	m := mustMutex(t, c, "wd-short-afresh")
	octx := WithOwner(ctx, "job")
	outer, err := m.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	inner, err := m.LockWithLease(octx, short)
	if err != nil {
		t.Fatal(err)
	}
	if context.Cause(outer) == nil {
		t.Errorf("the outer hold, whose lock was deleted, did not end with the fresh grant")
	}
	select {
	case <-inner.Done():
	case <-time.After(2 * time.Second):
		t.Fatalf("the fresh hold's context outlived its %s lease", short)
	}
	if !eventually(2*time.Second, func() bool { return !exists(t, node, m.Key()) }) {
		t.Fatalf("the lock is still held (PTTL %d ms) after the fresh hold's %s lease ended", pttlOf(t, node, m.Key()), short)
	}
}

// A re-entry with a short lease by a goroutine sharing the owner, sent before
// the owner's watchdog hold was registered (its Lock's reply on its way):
// the re-entry ran on the server after that grant and set its short lease.
// The watchdog renews the hold from then on, in time: the outer hold lasts.
func TestWatchdogGrantBesideShortReentry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	// Rounds every 3 s, the re-entry's lease 1 s: without a renewal made
	// for that lease, the lock is gone before the first round. (300 ms was
	// missed by a renewal sent in time on a loaded machine.)
	c := newTestClient(t, node.Client(t), WithWatchdog(9*time.Second, 0))
	ctx := testCtx(t, 30*time.Second)
	const short = time.Second
	m := mustMutex(t, c, "wd-beside-short")
	warmShared(t, m)
	octx := WithOwner(ctx, "job")
	var once atomic.Bool
	type result struct {
		lctx context.Context
		err  error
	}
	inner := make(chan result, 1)
	c.setGrantHook(func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		// The watchdog Lock's grant is on the server, not yet here.
		go func() {
			l, err := m.LockWithLease(octx, short)
			inner <- result{l, err}
		}()
		eventually(3*time.Second, func() bool {
			n, _ := node.Do(t, "HLEN", m.Key()).AsInt64()
			v, _ := node.Do(t, "HVALS", m.Key()).AsStrSlice()
			return n == 1 && len(v) == 1 && v[0] == "2"
		})
	})
	outer, err := m.Lock(octx)
	c.setGrantHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := <-inner
	if r.err != nil {
		t.Fatal(r.err)
	}
	time.Sleep(2 * time.Second)
	if err := context.Cause(outer); err != nil {
		t.Errorf("the watchdog hold ended beside a re-entry with a %s lease: %v", short, err)
	}
	if ttl := pttlOf(t, node, m.Key()); ttl <= 0 {
		t.Errorf("the lock is gone (PTTL %d) while the watchdog hold lasts", ttl)
	}
	_ = m.Unlock(r.lctx)
	_ = m.Unlock(outer)
}

// A hold taken with a lease and handed to the watchdog by a re-entry
// without one, while another call of its owner set a shorter lease on the
// server after that re-entry (a re-entry with a short lease, an Extend),
// handled here before the hand-over: the watchdog renews the hold at once,
// not a third of its lease from now, and the hold lasts.
func TestWatchdogHandOverBesideShorterLease(t *testing.T) {
	t.Parallel()
	const short = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		call func(m *Mutex, octx, outer context.Context) error
	}{
		{"re-entry", func(m *Mutex, octx, _ context.Context) error {
			_, err := m.LockWithLease(octx, short)
			return err
		}},
		{"Extend", func(m *Mutex, octx, outer context.Context) error {
			return m.Extend(octx, outer, short)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t), WithWatchdog(3*time.Second, 0))
			ctx := testCtx(t, 30*time.Second)
			m := mustMutex(t, c, "wd-handover-short")
			warmShared(t, m)
			octx := WithOwner(ctx, "job")
			outer, err := m.LockWithLease(octx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var once atomic.Bool
			var cerr error
			c.setGrantHook(func() {
				if once.CompareAndSwap(false, true) {
					// The watchdog re-entry ran on the server; the call
					// runs after it, and is handled first.
					cerr = tc.call(m, octx, outer)
				}
			})
			_, err = m.Lock(octx)
			c.setGrantHook(nil)
			if err != nil || cerr != nil {
				t.Fatalf("watchdog re-entry: %v; the call beside it: %v", err, cerr)
			}
			time.Sleep(1500 * time.Millisecond)
			if err := context.Cause(outer); err != nil {
				t.Errorf("the hold the watchdog renews ended: %v", err)
			}
			if ttl := pttlOf(t, node, m.Key()); ttl <= 0 {
				t.Errorf("the lock is gone (PTTL %d) while the watchdog renews the hold", ttl)
			}
		})
	}
}
