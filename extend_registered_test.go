package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// holdEndHook is an Observer that runs f on each HoldEnd, in the goroutine
// that ends the hold (a loss timer's, say: f is set and read atomically).
type holdEndHook struct {
	NopObserver
	f atomic.Pointer[func(HoldEvent)]
}

func (o *holdEndHook) HoldEnd(_ context.Context, _ Op, e HoldEvent) {
	if f := o.f.Load(); f != nil {
		(*f)(e)
	}
}

// Owner x's record outlived its lock on the server, so its next Lock is a
// fresh grant that finds and ends the old record. Between the new hold's
// registration and the arming of its loss deadline (here, while the old
// record's end is reported), an Extend to a shorter lease finds the new
// hold and runs on the server after the grant: that shorter lease is in
// force, and the lock context must end with it.
func TestExtendBeforeFreshHoldArmed(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &holdEndHook{}
	c := newTestClient(t, node.Client(t), WithObserver(obs))
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	m, om := mustMutex(t, c, "first-arm"), mustMutex(t, o, "first-arm")
	ctx := testCtx(t, 30*time.Second)
	xctx := WithOwner(ctx, "x")
	const long, short = 20 * time.Second, 400 * time.Millisecond
	if _, err := m.LockWithLease(xctx, long); err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.key) // gone on the server, unnoticed here
	var extErr error
	extended := false
	extend := func(e HoldEvent) {
		if e.Cause != EndLost || extended {
			return
		}
		extended = true
		extErr = m.Extend(ctx, xctx, short)
	}
	obs.f.Store(&extend)
	lctx, err := m.LockWithLease(xctx, long)
	obs.f.Store(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !extended || extErr != nil {
		t.Fatalf("Extend as the hold was registered: ran %v, %v", extended, extErr)
	}
	time.Sleep(short + 200*time.Millisecond)
	octx, err := om.TryLock(testCtx(t, 5*time.Second), 0)
	alive := lctx.Err() == nil
	if err != nil {
		t.Fatalf("the shorter lease in force did not end the lock: %v", err)
	}
	defer om.Unlock(octx)
	if alive {
		t.Fatalf("another owner holds the lock while owner x's lock context is alive (its loss deadline is %s away: the grant's arming overwrote the shorter lease an Extend had set)",
			time.Until(monoTime(lctx.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Second))
	}
}
