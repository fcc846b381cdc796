package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A MultiLock's TryLock(ctx, wait) over free members whose server stopped
// answering gives up with a *NotAcquiredError that says so (Unanswered), as
// a Mutex's does: no holder was seen, and the middleware answers 503, not
// 409. One whose member was answered with a holder does not say so.
func TestMultiLockFrozenFreeUnanswered(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	a, b := mustMutex(t, p.c, "ml-frozen-a"), mustMutex(t, p.c, "ml-frozen-b")
	warm(t, a)
	warm(t, b)
	ml := mustMulti(t, []Locker{a, b})
	p.px.Freeze()
	defer p.px.Thaw()
	_, err := ml.TryLock(context.Background(), 500*time.Millisecond)
	p.px.Thaw()
	var na *NotAcquiredError
	if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("MultiLock TryLock of free members, server frozen: %v (%#v), want a NotAcquiredError with Unanswered", err, na)
	}

	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	holder := mustMutex(t, direct, "ml-frozen-b")
	hctx, err := holder.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	// Made again while the server left it unanswered (a loaded machine's
	// reconnection after the freeze can take the whole 300 ms): what is
	// checked is the answered refusal.
	for i := 0; ; i++ {
		_, err = ml.TryLock(context.Background(), 300*time.Millisecond)
		na = nil
		if !errors.As(err, &na) || !na.Unanswered || i == 4 {
			break
		}
	}
	if !errors.As(err, &na) || na.Unanswered {
		t.Errorf("MultiLock TryLock with a member held: %v (%#v), want a NotAcquiredError without Unanswered", err, na)
	}
}
