package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lateExtendMutex is a Mutex whose Extend call fails at once, as one whose
// reply was lost, while its script reaches the server only once gate closes.
// The Extend makes such a call again (its connection broke): those fail the
// same way and send nothing.
type lateExtendMutex struct {
	*Mutex
	gate, ran chan struct{}
	once      sync.Once
}

func (g *lateExtendMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	g.once.Do(func() {
		go func() {
			defer close(g.ran)
			<-g.gate
			_, _, _ = g.Mutex.extendOnce(context.Background(), field, lease, token, guard)
		}()
	})
	return false, false, context.DeadlineExceeded
}

// An Extend to a shorter lease fails without a reply, its hold is released
// and the owner (shared through WithOwner) locks again; the Extend's script
// then reaches the server. It must not set the shorter lease on the new
// hold, whose lock context keeps its own longer deadline.
func TestLostExtendLandingLaterSparesOwnersNewHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-late")
	other := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "extend-late")
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-8")
	const long, short = 20 * time.Second, 300 * time.Millisecond
	first, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, first, long); err != nil { // script loaded
		t.Fatal(err)
	}
	g := &lateExtendMutex{Mutex: m, gate: make(chan struct{}), ran: make(chan struct{})}
	defer func() {
		select {
		case <-g.gate:
		default:
			close(g.gate)
		}
		<-g.ran
	}()
	if err := c.extend(ctx, first, g, short); err == nil {
		t.Fatal("Extend without a reply succeeded")
	}
	if err := m.Unlock(first); err != nil {
		t.Fatal(err)
	}
	second, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(second)
	close(g.gate)
	<-g.ran
	time.Sleep(short + 300*time.Millisecond)
	if octx, err := other.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
		defer other.Unlock(octx)
		if second.Err() == nil {
			t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the earlier hold's Extend, landing after its reply was lost, shortened it on the server")
		}
	}
}
