package scriptlock

import (
	"errors"
	"testing"
	"time"
)

// A semaphore's TryAcquire wait that gives up because the server stopped
// answering its last attempt is reported to the Observer as Failed, with an
// error, as a lock's is (NotAcquiredError.Unanswered): Contended would count
// an outage as contention for permits, with no error on the span.
func TestObserverUnansweredPermitWaitFailed(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := newProxied(t, WithObserver(rec))
	ctx := testCtx(t, 30*time.Second)
	_, _, tries := frozenPermitTries(ctx, t, p, "obs-frozen")
	for _, try := range tries {
		rec.take()
		p.px.Freeze()
		err := try.call(frozenWait)
		p.px.Thaw()
		if !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("%s TryAcquire, server frozen: %v, want ErrNotAcquired", try.prim, err)
		}
		acq, _, _ := rec.take()
		if len(acq) != 1 {
			t.Fatalf("%s: acquire events %+v, want one", try.prim, acq)
		}
		if e := acq[0].e; e.Outcome != Failed || !errors.Is(e.Err, ErrNotAcquired) {
			t.Errorf("%s: observed %s (err %v), want %s with an ErrNotAcquired error", try.prim, e.Outcome, e.Err, Failed)
		}
	}
}
