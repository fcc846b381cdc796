package scriptlock

import (
	"context"
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
	sem := mustSem(t, p.c, "obs-frozen-sem")
	ps := mustPermits(t, p.c, "obs-frozen-permits")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Warm the scripts, so that the frozen attempt is the acquisition's own.
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := ps.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, try := range []struct {
		prim Primitive
		call func() error
	}{
		{PrimitiveSemaphore, func() error { return sem.TryAcquire(context.Background(), 1, 300*time.Millisecond) }},
		{PrimitivePermitSemaphore, func() error {
			_, err := ps.TryAcquire(context.Background(), time.Minute, 300*time.Millisecond)
			return err
		}},
	} {
		rec.take()
		p.px.Freeze()
		err := try.call()
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
