package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowReplyExtendMutex is a Mutex whose Extend script runs on the server at
// once but whose reply reaches the caller only after the hold's lock
// context has ended: a reply held up past the loss deadline.
type slowReplyExtendMutex struct {
	*Mutex
	lctx context.Context
}

func (g *slowReplyExtendMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	held, acked, err := g.Mutex.extendOnce(ctx, field, lease, token, guard)
	select {
	case <-g.lctx.Done():
	case <-time.After(10 * time.Second):
	}
	return held, acked, err
}

// An Extend whose reply arrives after its hold ended (the loss deadline
// passed while it was in flight: the hold's lock context is cancelled with
// ErrLockLost and the lock is given back) must not report success: the
// caller would go on as if it held the lock for the new lease.
func TestExtendReplyAfterHoldEndedIsNotHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-ended")
	ctx := testCtx(t, 20*time.Second)
	lctx, err := m.LockWithLease(ctx, 400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	g := &slowReplyExtendMutex{Mutex: m, lctx: lctx}
	err = c.extend(ctx, lctx, g, 10*time.Second)
	if lctx.Err() == nil {
		t.Fatal("the lock context outlived its loss deadline")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("lock context ended with %v, want ErrLockLost", cause)
	}
	if err == nil {
		t.Fatal("Extend reported success for a hold whose lock context had already ended with ErrLockLost")
	}
	if !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend of an ended hold = %v, want ErrNotHeld", err)
	}
}
