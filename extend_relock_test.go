package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// gatedExtendMutex is a Mutex whose Extend calls wait for gate before they
// are sent.
type gatedExtendMutex struct {
	*Mutex
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedExtendMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	close(g.entered)
	<-g.gate
	return g.Mutex.extendOnce(ctx, field, lease, token, guard)
}

// An Extend to a shorter lease is on its way while its hold is released and
// the owner (shared through WithOwner) locks again: the Extend's script runs
// on the new hold, whose loss deadline must not outlive the shorter lease.
func TestExtendOfReleasedHoldBoundsOwnersNewHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-relock")
	other := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "extend-relock")
	warmShared(t, m)
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
	const long, short = 20 * time.Second, 300 * time.Millisecond
	lctx1, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx1, long); err != nil { // script loaded
		t.Fatal(err)
	}
	g := &gatedExtendMutex{Mutex: m, entered: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- c.extend(ctx, lctx1, g, short) }()
	<-g.entered
	if err := m.Unlock(lctx1); err != nil {
		close(g.gate)
		t.Fatal(err)
	}
	lctx2, err := m.LockWithLease(ctx, long)
	close(g.gate)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(lctx2)
	<-done
	time.Sleep(short + 300*time.Millisecond)
	if octx, err := other.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
		defer other.Unlock(octx)
		if lctx2.Err() == nil {
			t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the earlier hold's Extend shortened it on the server")
		}
	}
}
