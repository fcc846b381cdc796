package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A read hold with a short lease, re-entered with a longer one, then the
// re-entry's RUnlock, whose reply is slow: the release sets the lock's
// expiry to the longest read lease left (the short one) as soon as its
// script runs, so the loss deadline must move before the call is sent, not
// when its reply arrives.
func TestReentrantRUnlockSlowReplyShortensLoss(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	rw := mustRW(t, p.c, "runlock-slow-reply")
	orw := mustRW(t, newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix)), "runlock-slow-reply")
	ctx := testCtx(t, 20*time.Second)
	// Long enough for the re-entry below on a loaded machine (a re-entry
	// made once it ran out finds the owner's context ended).
	const short = time.Second
	// The scripts loaded: the first re-entrant RUnlock is answered. Leases
	// a loaded machine's first calls (a dial, the scripts' loads) do not
	// outlast: the re-entry needs the first hold alive.
	w, err := rw.RLockWithLease(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := rw.RLockWithLease(w, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(w2); err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(w); err != nil {
		t.Fatal(err)
	}
	o, err := rw.RLockWithLease(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	in, err := rw.RLockWithLease(o, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.px.FreezeReplies()
	done := make(chan error, 1)
	go func() { done <- rw.RUnlock(in) }()
	time.Sleep(short + 600*time.Millisecond)
	octx, oerr := orw.TryLock(testCtx(t, 5*time.Second), 0)
	alive := o.Err() == nil
	p.px.Thaw()
	<-done
	if oerr == nil {
		defer orw.Unlock(octx)
		if alive {
			t.Fatal("a writer holds the lock while the owner's read context is alive: the re-entrant RUnlock's slow reply left the loss deadline past the read lease it left in force")
		}
	}
}

// Three read holds of one owner, the first with a short lease that runs
// out: releasing one of the two longer ones leaves the other, which keeps
// the lock, and the owner's read context lives on with it.
func TestReentrantRUnlockKeepsLongerReadLease(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	rw := mustRW(t, p.c, "runlock-keeps")
	ctx := testCtx(t, 20*time.Second)
	// Short, but long enough for the two re-entries below on a loaded
	// machine: a re-entry made once it ran out finds the owner's context
	// ended.
	o, err := rw.RLockWithLease(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a, err := rw.RLockWithLease(o, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rw.RLockWithLease(o, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(a)
	time.Sleep(1200 * time.Millisecond) // the first read lease ran out
	if err := rw.RUnlock(b); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := context.Cause(o); err != nil {
		t.Fatalf("the owner's read context ended while a 10 s read lease holds the lock: %v", err)
	}
	if !exists(t, p.node, rw.key) {
		t.Fatal("the lock ended on the server")
	}
}
