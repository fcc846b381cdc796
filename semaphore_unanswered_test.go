package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A semaphore's or permit semaphore's TryAcquire whose wait ends while the
// server does not answer its last attempt says so: a *NotAcquiredError with
// Unanswered, as a lock's TryLock does, not a bare ErrNotAcquired that reads
// as "no permits free". A wait that runs out while others hold the permits
// (every attempt answered) stays a *NotAcquiredError without Unanswered.
func TestSemaphoreTryAcquireFrozenUnanswered(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 30*time.Second)
	sem := mustSem(t, p.c, "frozen-unanswered-sem")
	ps := mustPermits(t, p.c, "frozen-unanswered-permits")
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
	tries := []struct {
		prim Primitive
		call func() error
	}{
		{PrimitiveSemaphore, func() error { return sem.TryAcquire(context.Background(), 1, 300*time.Millisecond) }},
		{PrimitivePermitSemaphore, func() error {
			_, err := ps.TryAcquire(context.Background(), time.Minute, 300*time.Millisecond)
			return err
		}},
	}
	for _, try := range tries {
		p.px.Freeze()
		err := try.call()
		p.px.Thaw()
		var na *NotAcquiredError
		if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || !na.Unanswered {
			t.Errorf("%s TryAcquire, server frozen: %v (%#v), want a NotAcquiredError with Unanswered", try.prim, err, na)
		}
	}
	// Every permit taken: plain contention, answered.
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, try := range tries {
		err := try.call()
		var na *NotAcquiredError
		if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || na.Unanswered {
			t.Errorf("%s TryAcquire, no permit free: %v (%#v), want a NotAcquiredError without Unanswered", try.prim, err, na)
		}
	}
}
