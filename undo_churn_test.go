package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// churnHook is a Mutex whose undo, on each of its first reads of the owner's
// hold count, sees another goroutine of the owner re-enter the lock and
// unlock it while the read's reply is on its way.
type churnHook struct {
	*Mutex
	owner context.Context
	reads atomic.Int32
	churn int32
	t     *testing.T
}

func (r *churnHook) holdsOf(ctx context.Context, field string) (int64, error) {
	n, err := r.Mutex.holdsOf(ctx, field)
	if r.reads.Add(1) <= r.churn {
		l, lerr := r.Mutex.Lock(r.owner)
		if lerr != nil {
			r.t.Errorf("re-entry: %v", lerr)
			return n, err
		}
		if uerr := r.Mutex.Unlock(l); uerr != nil {
			r.t.Errorf("Unlock of the re-entry: %v", uerr)
		}
	}
	return n, err
}

// An undo of an owner shared through its context whose goroutines keep
// re-entering and unlocking the lock as it reads the hold count does not
// report the hold it found as given back when it never gave it back: it
// read the count again after each change until its reads ran out, then
// returned nil, and the hold nobody knew of stayed on the server (the
// background undo stopped trying; an Unlock gave up the owner's last known
// hold and left the lock held for its lease).
func TestUndoUnderOwnersChurnGivesBackOrReports(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-churn")
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker")
	field := c.fieldOf(m, "worker")
	lctx, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	// A hold the Client does not know of: an acquisition whose reply was lost.
	if err := node.Do(t, "HINCRBY", m.key, field, "1").Error(); err != nil {
		t.Fatal(err)
	}
	p := &churnHook{Mutex: m, owner: owner, churn: 200, t: t}
	uerr := c.undo(ctx, p, field, m.cfg.watchdogLease, 0, false)
	st, err := m.State(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if uerr == nil && st.HoldCount != 1 {
		t.Fatalf("undo returned nil after %d reads, yet the server has %d holds of the owner: want the 1 the Client knows of", p.reads.Load(), st.HoldCount)
	}
	// Once the churn is over, an undo gives the hold back.
	p.churn = 0
	if err := c.undo(ctx, p, field, m.cfg.watchdogLease, 0, false); err != nil {
		t.Fatalf("undo once the owner is quiet: %v", err)
	}
	if st, err = m.State(lctx); err != nil {
		t.Fatal(err)
	}
	if !st.Locked || st.HoldCount != 1 || lctx.Err() != nil {
		t.Fatalf("after the undo State is %+v (context %v): want the owner's own hold", st, lctx.Err())
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
