package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A RedLock node whose call its node timeout cut off (the node stopped
// answering) is observed as a call the server did not answer, Failed with a
// NotAcquiredError with Unanswered, not as timed_out, a deadline the caller
// never set. The QuorumError still tells the node's timeout
// (context.DeadlineExceeded) and no contention.
func TestRedLockFrozenNodeObserved(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	_, cs, pxs := proxiedNodes(t, 3, WithObserver(rec))
	// Roomy enough for a loaded machine: the live node's answers (and the
	// warm-up's) must come within it.
	r := mustRedLock(t, "red-obs", cs, WithNodeTimeout(time.Second))
	warm(t, r)
	rec.take()
	pxs[1].Freeze()
	pxs[2].Freeze()
	defer pxs[1].Thaw()
	defer pxs[2].Thaw()
	_, err := r.TryLock(context.Background(), 0)
	pxs[1].Thaw()
	pxs[2].Thaw()
	var qe *QuorumError
	if !errors.As(err, &qe) || errors.Is(err, ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("TryLock, two nodes frozen: %v, want a QuorumError with the nodes' timeouts and no contention", err)
	}
	acq, _, _ := rec.take()
	frozen := 0
	for _, a := range acq {
		if a.e.Outcome == Acquired {
			continue
		}
		frozen++
		var na *NotAcquiredError
		if a.e.Outcome != Failed || !errors.As(a.e.Err, &na) || !na.Unanswered {
			t.Errorf("frozen node observed %s (err %v), want %s with a NotAcquiredError with Unanswered", a.e.Outcome, a.e.Err, Failed)
		}
	}
	if frozen != 2 {
		t.Errorf("%d frozen nodes' acquisitions observed, want 2: %+v", frozen, acq)
	}
}
