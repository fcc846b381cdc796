package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two goroutines of one owner (WithOwner) lock together: the second one's
// attempt is sent before the first one's grant is registered, and reaches
// the server after it, as a re-entry. An Extend of the first hold to a
// shorter lease then runs on the server after the re-entry, and is answered
// before the re-entry's reply is handled. The shorter lease is in force, so
// the re-entry's reply must not move the end of the owner's lock contexts
// past it.
func TestReentryRacingFirstGrantExtendShorterWins(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	m, om := mustMutex(t, c, "reentry-race"), mustMutex(t, o, "reentry-race")
	ctx := testCtx(t, 30*time.Second)
	octx := WithOwner(ctx, "x")
	const long, short = 20 * time.Second, 400 * time.Millisecond
	type result struct {
		lctx context.Context
		err  error
	}
	second := make(chan result, 1)
	reentered, resume := make(chan struct{}), make(chan struct{})
	var grants atomic.Int32
	c.setGrantHook(func() {
		switch grants.Add(1) {
		case 1: // the first grant, not registered yet: the second goroutine locks
			go func() {
				lctx, err := m.LockWithLease(octx, long)
				second <- result{lctx, err}
			}()
			select {
			case <-reentered:
			case <-time.After(5 * time.Second):
			}
		case 2: // the re-entry, granted on the server: its reply waits
			close(reentered)
			select {
			case <-resume:
			case <-time.After(10 * time.Second):
			}
		}
	})
	defer func() { c.setGrantHook(nil) }()
	first, err := m.LockWithLease(octx, long)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, first, short); err != nil {
		t.Fatal(err)
	}
	close(resume)
	r := <-second
	if r.err != nil {
		t.Fatal(r.err)
	}
	time.Sleep(short + 200*time.Millisecond)
	octx2, err := om.TryLock(testCtx(t, 5*time.Second), 0)
	alive := first.Err() == nil
	if err != nil {
		t.Fatalf("the shorter lease in force did not end the lock: %v", err)
	}
	defer om.Unlock(octx2)
	if alive {
		t.Fatalf("another owner holds the lock while the owner's lock context is alive (its loss deadline is %s away): the re-entry's reply, handled after the Extend's, moved it past the shorter lease in force",
			time.Until(monoTime(first.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond))
	}
}

// renewalCount counts the watchdog's rounds of renewals, each reported after
// the holds it renewed were re-armed.
type renewalCount struct {
	NopObserver
	n atomic.Int64
}

func (r *renewalCount) Renewal(e RenewalEvent) {
	if e.Renewed > 0 {
		r.n.Add(1)
	}
}

// A watchdog hold is re-entered with a longer explicit lease. A renewal sent
// while the re-entry is in flight runs on the server after it and sets the
// watchdog's shorter lease again; its reply is handled before the
// re-entry's. The renewal's lease is in force, so the re-entry's reply must
// not move the end of the lock context past it: when renewals stop
// arriving, the context must end before the lock expires on the server.
func TestReentryHandledAfterLaterRenewal(t *testing.T) {
	t.Parallel()
	rc := &renewalCount{}
	p := newProxied(t, WithObserver(rc), WithWatchdog(time.Second, 200*time.Millisecond))
	m := mustMutex(t, p.c, "reentry-renewal")
	warm(t, m)
	ctx := testCtx(t, 20*time.Second)
	outer, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.c.setGrantHook(func() {
		// The re-entry ran on the server; the second renewal from now was
		// sent after it.
		from := rc.n.Load()
		eventually(3*time.Second, func() bool { return rc.n.Load() >= from+2 })
	})
	inner, err := m.LockWithLease(outer, 10*time.Second)
	p.c.setGrantHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = inner
	p.px.Freeze() // renewals no longer arrive
	defer p.px.Thaw()
	if !eventually(3*time.Second, func() bool { return !exists(t, p.node, m.key) }) {
		t.Fatal("the lock did not expire on the server")
	}
	if outer.Err() == nil {
		t.Fatalf("the lock expired on the server while its context is alive (its loss deadline is %s away): the re-entry's reply, handled after a renewal that ran later, moved it past the renewal's lease",
			time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond))
	}
}

// An RWMutex re-entry with a shorter lease never shortens the lock on the
// server, whatever else runs beside it: an Extend of the hold to its own
// long lease, handled before the re-entry's reply, must not leave the
// owner's hold to end with the re-entry's shorter lease.
func TestRWMutexShorterReentryBesideExtendKeepsHold(t *testing.T) {
	t.Parallel()
	for _, write := range []bool{true, false} {
		name := map[bool]string{true: "write", false: "read"}[write]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			rw := mustRW(t, c, "short-reentry-extend-"+name)
			ctx := testCtx(t, 20*time.Second)
			lockWithLease := rw.LockWithLease
			if !write {
				lockWithLease = rw.RLockWithLease
			}
			const long, short = 10 * time.Second, 200 * time.Millisecond
			outer, err := lockWithLease(ctx, long)
			if err != nil {
				t.Fatal(err)
			}
			var eerr error
			c.setGrantHook(func() { eerr = rw.Extend(ctx, outer, long) })
			_, err = lockWithLease(outer, short)
			c.setGrantHook(nil)
			if err != nil || eerr != nil {
				t.Fatalf("re-entry: %v; Extend: %v", err, eerr)
			}
			time.Sleep(time.Second)
			if err := context.Cause(outer); err != nil {
				t.Fatalf("outer %s hold ended 1 s after a re-entry with a %s lease beside an Extend to %s: %v; the lock's expiry on the server is %d ms",
					name, short, long, err, pttlOf(t, node, rw.Key()))
			}
		})
	}
}

// A re-entry of a watchdog hold with a short explicit lease whose reply was
// lost ran on the server after all (it landed late, say), and a renewal
// since has set the watchdog's lease again. Its undo gives the unknown hold
// back; the owner's known hold stays, and the lock must stay armed for it:
// when renewals stop arriving, the context must end before the lock
// expires on the server.
func TestUndoOfReentryKeepsHoldsLease(t *testing.T) {
	t.Parallel()
	rc := &renewalCount{}
	p := newProxied(t, WithObserver(rc), WithWatchdog(3*time.Second, 500*time.Millisecond))
	m := mustMutex(t, p.c, "undo-reentry")
	warmShared(t, m)
	ctx := testCtx(t, 20*time.Second)
	outer, err := m.Lock(WithOwner(ctx, "x"))
	if err != nil {
		t.Fatal(err)
	}
	field := outer.Value(lockCtxKey{}).(*lockCtx).hold.field
	const short = 1200 * time.Millisecond
	// The re-entry as the server ran it; the Client never heard of it.
	a, _, err := m.tryAcquire(ctx, field, short, 0, guardWait{}, waitAttempt{shared: true})
	if err != nil || !a.granted || a.fresh {
		t.Fatalf("re-entry on the server: %+v, %v", a, err)
	}
	from := rc.n.Load()
	if !eventually(3*time.Second, func() bool { return rc.n.Load() > from }) {
		t.Fatalf("no renewal within 3 s (%d, err %v, lossAt in %s)", rc.n.Load(), context.Cause(outer), time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())))
	}
	// As undoLater undoes an attempt of unknown outcome: with its lease.
	if err := p.c.undo(ctx, m, field, short, 0, false); err != nil {
		t.Fatal(err)
	}
	p.px.Freeze() // renewals no longer arrive
	defer p.px.Thaw()
	if !eventually(4*time.Second, func() bool { return !exists(t, p.node, m.key) }) {
		t.Fatal("the lock did not expire on the server")
	}
	if outer.Err() == nil {
		t.Fatalf("the lock expired on the server while its context is alive (its loss deadline is %s away): the undo re-armed the lock with the undone attempt's %s lease",
			time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond), short)
	}
}
