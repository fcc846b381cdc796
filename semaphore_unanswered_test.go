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
	sem, ps, tries := frozenPermitTries(ctx, t, p, "frozen-unanswered")
	for _, try := range tries {
		p.px.Freeze()
		err := try.call(frozenWait)
		p.px.Thaw()
		var na *NotAcquiredError
		if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || !na.Unanswered {
			t.Errorf("%s TryAcquire, server frozen: %v (%#v), want a NotAcquiredError with Unanswered", try.prim, err, na)
		}
	}
	// Every permit taken: plain contention, answered. A wait long enough
	// that its attempts are answered well before it ends: on a loaded 2-core
	// machine the last attempt of a 300 ms one was still unanswered at its
	// end, which is Unanswered, as it should be.
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, try := range tries {
		err := try.call(2 * time.Second)
		var na *NotAcquiredError
		if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || na.Unanswered {
			t.Errorf("%s TryAcquire, no permit free: %v (%#v), want a NotAcquiredError without Unanswered", try.prim, err, na)
		}
	}
}

// frozenWait is how long a TryAcquire against the frozen server waits.
const frozenWait = 300 * time.Millisecond

// permitTry is one TryAcquire on a semaphore kind, waiting at most wait.
type permitTry struct {
	prim Primitive
	call func(wait time.Duration) error
}

// frozenPermitTries sets up a Semaphore and a PermitSemaphore of one permit
// each, named after name, with their scripts loaded (so that an attempt made
// while the proxy is frozen is the acquisition's own), and the TryAcquire of
// each.
func frozenPermitTries(ctx context.Context, t *testing.T, p proxied, name string) (*Semaphore, *PermitSemaphore, []permitTry) {
	t.Helper()
	sem := mustSem(t, p.c, name+"-sem")
	ps := mustPermits(t, p.c, name+"-permits")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
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
	return sem, ps, []permitTry{
		{PrimitiveSemaphore, func(wait time.Duration) error { return sem.TryAcquire(context.Background(), 1, wait) }},
		{PrimitivePermitSemaphore, func(wait time.Duration) error {
			_, err := ps.TryAcquire(context.Background(), time.Minute, wait)
			return err
		}},
	}
}
