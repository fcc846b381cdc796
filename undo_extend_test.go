package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowExtendMutex is a Mutex whose Extend calls, once their script has run,
// hold their reply back until gate closes.
type slowExtendMutex struct {
	*Mutex
	ran  chan struct{}
	gate chan struct{}
}

func (s *slowExtendMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	held, acked, err := s.Mutex.extendOnce(ctx, field, lease, token, guard)
	close(s.ran)
	<-s.gate
	return held, acked, err
}

// The undo of a hold of unknown outcome re-arms the lock with the hold's
// lease while an Extend to a longer lease is on its way back: the server ran
// the Extend first, so the undo's shorter lease is the one in force, and the
// Extend's reply must not move the loss deadline past it.
func TestUndoBesideExtendKeepsShorterLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-extend")
	other := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "undo-extend")
	ctx := testCtx(t, 20*time.Second)
	// Two seconds: the steps before the Extend's reply (a new connection
	// for the HINCRBY, the Extend, the undo) must fit in the first lease, or
	// the hold ends before the Extend's reply and it fails; a loaded machine
	// took over 500 ms for them.
	const short = 2 * time.Second
	lctx, err := m.LockWithLease(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.(*lockCtx).hold
	// A re-entry whose reply was lost: a hold on the server the Client does
	// not know of.
	node.Do(t, "HINCRBY", m.key, h.field, "1")
	s := &slowExtendMutex{Mutex: m, ran: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- c.extend(ctx, lctx, s, 20*time.Second) }()
	<-s.ran
	if err := c.undo(ctx, m, h.field, short, 0, false); err != nil {
		close(s.gate)
		t.Fatal(err)
	}
	close(s.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	time.Sleep(short + 300*time.Millisecond)
	if octx, err := other.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
		defer other.Unlock(octx)
		if lctx.Err() == nil {
			t.Fatal("another owner holds the lock while the owner's context is alive: the Extend's reply moved the loss deadline past the lease the undo set after it")
		}
	}
}
