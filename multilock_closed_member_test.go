package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock with a member whose Client is closed fails with ErrClosed
// before it takes any member: the members ordered before it were acquired
// (their fencing counters drawn) and given back (their waiters woken) for
// nothing.
func TestMultiLockClosedMemberTakesNothing(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	rec := &recorder{}
	c0 := newTestClient(t, nodes[0].Client(t), WithObserver(rec))
	c1 := newTestClient(t, nodes[1].Client(t))
	a, b := mustMutex(t, c0, "closed-a"), mustMutex(t, c1, "closed-b")
	ml := mustMulti(t, []Locker{a, b})
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	for _, try := range []func() error{
		func() error { _, err := ml.Lock(testCtx(t, 5*time.Second)); return err },
		func() error { _, err := ml.TryLock(context.Background(), 0); return err },
		func() error { _, err := ml.TryLock(context.Background(), time.Second); return err },
	} {
		if err := try(); !errors.Is(err, ErrClosed) {
			t.Errorf("MultiLock with a member's Client closed: %v, want ErrClosed", err)
		}
	}
	if acq, _, _ := rec.take(); len(acq) != 0 {
		t.Errorf("member a acquired %d times, want none: %+v", len(acq), acq)
	}
	if n, err := nodes[0].Do(t, "DBSIZE").AsInt64(); err != nil || n != 0 {
		t.Errorf("keys on member a's server: %d (%v), want none", n, err)
	}
}
