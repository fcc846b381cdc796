package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TryLock(ctx, wait) with no deadline on ctx gives up within wait (plus a
// margin) although the server stopped answering while it waited in line.
func TestTryLockBoundedByWaitFrozen(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			l := lc.make(t, p.c, "wait-bound")
			warm(t, l)
			holdDirect(t, p, lc, "wait-bound")
			time.AfterFunc(300*time.Millisecond, p.px.Freeze)
			defer p.px.Thaw()
			start := time.Now()
			_, err := l.TryLock(context.Background(), time.Second)
			elapsed := time.Since(start)
			p.px.Thaw()
			if !errors.Is(err, ErrNotAcquired) {
				t.Errorf("TryLock: %v, want ErrNotAcquired", err)
			}
			if elapsed > 1800*time.Millisecond {
				t.Fatalf("TryLock(ctx, 1s) waiting in line when the server froze returned after %s", elapsed)
			}
		})
	}
}

// TryAcquire and AwaitTimeout with no deadline on ctx likewise give up within
// their wait when the server stops answering mid-wait.
func TestWaitBoundedByWaitFrozen(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup leaves the wait blocked (nothing available, count 1) and
		// returns the bounded wait.
		setup func(t *testing.T, c *Client) func(wait time.Duration) (bool, error)
	}{
		{"Semaphore", func(t *testing.T, c *Client) func(time.Duration) (bool, error) {
			s := mustSem(t, c, "sem")
			if _, err := s.AddPermits(testCtx(t, 5*time.Second), 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Acquire(testCtx(t, 5*time.Second), 1); err != nil {
				t.Fatal(err)
			}
			return func(wait time.Duration) (bool, error) {
				err := s.TryAcquire(context.Background(), 1, wait)
				if errors.Is(err, ErrNotAcquired) {
					return false, nil
				}
				return err == nil, err
			}
		}},
		{"PermitSemaphore", func(t *testing.T, c *Client) func(time.Duration) (bool, error) {
			s := mustPermits(t, c, "permits")
			if _, err := s.TrySetPermits(testCtx(t, 5*time.Second), 1); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(testCtx(t, 5*time.Second), time.Minute); err != nil {
				t.Fatal(err)
			}
			return func(wait time.Duration) (bool, error) {
				_, err := s.TryAcquire(context.Background(), time.Minute, wait)
				if errors.Is(err, ErrNotAcquired) {
					return false, nil
				}
				return err == nil, err
			}
		}},
		{"CountDownLatch", func(t *testing.T, c *Client) func(time.Duration) (bool, error) {
			l := mustLatch(t, c, "latch")
			if _, err := l.TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
				t.Fatal(err)
			}
			return func(wait time.Duration) (bool, error) {
				ok, err := l.AwaitTimeout(context.Background(), wait)
				if errors.Is(err, ErrNotAcquired) {
					return false, nil // the server froze: Unanswered
				}
				return ok, err
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxied(t)
			try := tc.setup(t, p.c)
			time.AfterFunc(300*time.Millisecond, p.px.Freeze)
			defer p.px.Thaw()
			start := time.Now()
			ok, err := try(time.Second)
			elapsed := time.Since(start)
			p.px.Thaw()
			if ok || err != nil {
				t.Errorf("wait: %v, %v; want false, nil", ok, err)
			}
			if elapsed > 1800*time.Millisecond {
				t.Fatalf("a 1s wait when the server froze returned after %s", elapsed)
			}
		})
	}
}

// TryLock(ctx, wait) of a free lock on a server that stopped answering gives
// up with a *NotAcquiredError that says so (Unanswered): no holder was seen,
// so callers (the middleware) can tell an unreachable server from
// contention. One whose attempts were answered with a holder does not say so.
func TestTryLockFrozenFreeLockUnanswered(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			l := lc.make(t, p.c, "frozen-free")
			warm(t, l)
			p.px.Freeze()
			defer p.px.Thaw()
			_, err := l.TryLock(context.Background(), 500*time.Millisecond)
			p.px.Thaw()
			var na *NotAcquiredError
			if !errors.As(err, &na) || !na.Unanswered {
				t.Errorf("TryLock of a free lock, server frozen: %v (%#v), want a NotAcquiredError with Unanswered", err, na)
			}
			holdDirect(t, p, lc, "frozen-free")
			_, err = l.TryLock(context.Background(), 300*time.Millisecond)
			if !errors.As(err, &na) || na.Unanswered {
				t.Errorf("TryLock of a held lock: %v (%#v), want a NotAcquiredError without Unanswered", err, na)
			}
		})
	}
}
