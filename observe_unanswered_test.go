package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A TryLock wait that gives up because the server stopped answering
// (NotAcquiredError.Unanswered) is reported to the Observer as Failed, with
// the error, as a call to an unreachable server is: Contended says others
// held the lock, and would count an outage as contention on dashboards
// while the middleware answers the same wait 503 (redis_down).
func TestObserverUnansweredWaitFailed(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := newProxied(t, WithObserver(rec))
	m := mustMutex(t, p.c, "obs-frozen")
	warm(t, m)
	rec.take()
	p.px.Freeze()
	defer p.px.Thaw()
	_, err := m.TryLock(context.Background(), 300*time.Millisecond)
	p.px.Thaw()
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Fatalf("TryLock, server frozen: %v, want a NotAcquiredError with Unanswered", err)
	}
	acq, _, _ := rec.take()
	if len(acq) != 1 {
		t.Fatalf("acquire events %+v, want one", acq)
	}
	if e := acq[0].e; e.Outcome != Failed || !errors.As(e.Err, &na) || !na.Unanswered {
		t.Errorf("observed %s (err %v), want %s with the NotAcquiredError", e.Outcome, e.Err, Failed)
	}
}
