package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A waiting semaphore acquisition whose attempt ran on the server and whose
// connection then broke (the node died, or went away in a failover) settles
// that attempt, giving back what it took, and waits on, as Lock does: it
// neither fails with EOF nor keeps what the lost attempt took.
func TestSemaphoreAcquireAfterBrokenConnection(t *testing.T) {
	t.Parallel()
	t.Run("Semaphore", func(t *testing.T) {
		t.Parallel()
		p := newProxied(t)
		direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
		ctx := testCtx(t, 30*time.Second)
		s := mustSem(t, p.c, "sem")
		watch := mustSem(t, direct, "sem")
		if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		if err := s.Acquire(ctx, 1); err != nil || s.Release(ctx, 1) != nil {
			t.Fatalf("warm-up: %v", err)
		}
		err := p.lostReply(t, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 0 }, func() error {
			if err := s.Acquire(ctx, 2); err != nil {
				return err
			}
			return s.Release(ctx, 2)
		})
		if err != nil {
			t.Fatalf("Acquire after its attempt's connection broke: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // an undo running late would add permits twice
		if n, err := watch.AvailablePermits(ctx); err != nil || n != 2 {
			t.Fatalf("available permits = %d, %v; want exactly 2", n, err)
		}
	})
	t.Run("PermitSemaphore", func(t *testing.T) {
		t.Parallel()
		p := newProxied(t)
		direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
		ctx := testCtx(t, 30*time.Second)
		s := mustPermits(t, p.c, "permits")
		watch := mustPermits(t, direct, "permits")
		if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		if id, err := s.Acquire(ctx, time.Minute); err != nil || s.Release(ctx, id) != nil {
			t.Fatalf("warm-up: %v", err)
		}
		err := p.lostReply(t, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 0 }, func() error {
			id, err := s.Acquire(ctx, time.Minute)
			if err != nil {
				return err
			}
			return s.Release(context.Background(), id)
		})
		if err != nil {
			t.Fatalf("Acquire after its attempt's connection broke: %v", err)
		}
		st, err := watch.State(ctx)
		if err != nil || st.Available != 1 || st.Held != 0 {
			t.Fatalf("State = %+v, %v; want 1 free, none held (the lost attempt's permit waits for its one-minute lease)", st, err)
		}
	})
}
