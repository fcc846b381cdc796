package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A member of a MultiLock whose TryLock wait ran out while the member's
// server did not answer is observed as the member's own wait so cut off
// would be: Failed with a NotAcquiredError with Unanswered. It was observed
// as timed_out ("context canceled: context deadline exceeded"), a deadline
// the caller never set.
func TestMultiLockCutMemberObserved(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := newProxied(t, WithObserver(rec))
	a, b := mustMutex(t, p.c, "ml-cutobs-a"), mustMutex(t, p.c, "ml-cutobs-b")
	warm(t, a)
	warm(t, b)
	ml := mustMulti(t, []Locker{a, b})
	for i := 0; i < 3; i++ {
		rec.take()
		p.px.Freeze()
		_, err := ml.TryLock(context.Background(), 300*time.Millisecond)
		p.px.Thaw()
		var na *NotAcquiredError
		if !errors.As(err, &na) || !na.Unanswered {
			t.Fatalf("MultiLock TryLock, server frozen: %v, want a NotAcquiredError with Unanswered", err)
		}
		acq, _, _ := rec.take()
		if len(acq) == 0 {
			t.Fatal("no acquire event")
		}
		for _, r := range acq {
			if e := r.e; e.Outcome != Failed || !errors.As(e.Err, &na) || !na.Unanswered {
				t.Errorf("member %s observed %s (err %v), want %s with a NotAcquiredError with Unanswered", r.op.Name, e.Outcome, e.Err, Failed)
			}
		}
	}
}
