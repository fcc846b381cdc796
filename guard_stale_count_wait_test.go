package scriptlock

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardStaleCountWaitGoesOn: a waiting acquisition whose grant the
// failover guard gave back for want of an acknowledgement, because the
// replica its Client counted a moment before has gone (a failover that left
// the primary without replicas, a replica detached), counts the replicas
// again and goes on waiting with the new count: it takes the lock (the
// permits), where it failed with ErrNotReplicated although a primary
// without replicas has no acknowledgement to give, and a caller's Lock with
// a long context ended at the first release after the failover.
func TestGuardStaleCountWaitGoesOn(t *testing.T) {
	t.Parallel()
	type kind struct {
		// hold takes the lock (the permits) through h and returns its
		// release; wait waits for it through w and gives it back; channel
		// is where w's waiter registers.
		hold    func(t *testing.T, ctx context.Context, h *Client) func() error
		wait    func(ctx context.Context, w *Client) error
		channel func(w *Client) string
	}
	for name, k := range map[string]kind{
		"Mutex": {
			hold: func(t *testing.T, ctx context.Context, h *Client) func() error {
				m := mustMutex(t, h, "stale-count")
				l, err := m.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return func() error { return m.Unlock(l) }
			},
			wait: func(ctx context.Context, w *Client) error {
				m, err := w.Mutex("stale-count")
				if err != nil {
					return err
				}
				l, err := m.Lock(ctx)
				if err != nil {
					return err
				}
				return m.Unlock(l)
			},
			channel: func(w *Client) string { return mustMutex(t, w, "stale-count").wake + ":" + w.ID() },
		},
		"Semaphore": {
			hold: func(t *testing.T, ctx context.Context, h *Client) func() error {
				s := mustSem(t, h, "stale-count")
				if _, err := s.TrySetPermits(ctx, 1); err != nil {
					t.Fatal(err)
				}
				if err := s.Acquire(ctx, 1); err != nil {
					t.Fatal(err)
				}
				return func() error { return s.Release(ctx, 1) }
			},
			wait: func(ctx context.Context, w *Client) error {
				s, err := w.Semaphore("stale-count")
				if err != nil {
					return err
				}
				if err := s.Acquire(ctx, 1); err != nil {
					return err
				}
				return s.Release(ctx, 1)
			},
			channel: func(w *Client) string { return mustSem(t, w, "stale-count").channel },
		},
		"PermitSemaphore": {
			hold: func(t *testing.T, ctx context.Context, h *Client) func() error {
				s := mustPermits(t, h, "stale-count")
				if _, err := s.TrySetPermits(ctx, 1); err != nil {
					t.Fatal(err)
				}
				id, err := s.Acquire(ctx, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				return func() error { return s.Release(ctx, id) }
			},
			wait: func(ctx context.Context, w *Client) error {
				s, err := w.PermitSemaphore("stale-count")
				if err != nil {
					return err
				}
				id, err := s.Acquire(ctx, time.Minute)
				if err != nil {
					return err
				}
				return s.Release(ctx, id)
			},
			channel: func(w *Client) string { return mustPermits(t, w, "stale-count").channel },
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			primary, replica := redistest.Replicated(t)
			ctx := testCtx(t, 20*time.Second)
			h := newTestClient(t, primary.Client(t), WithFailoverGuard(false, 0))
			w := newTestClient(t, primary.Client(t), WithKeyPrefix(h.cfg.prefix), WithFailoverGuard(true, 200*time.Millisecond))
			release := k.hold(t, ctx, h)
			done := make(chan error, 1)
			go func() { done <- k.wait(ctx, w) }()
			waitFor(t, 10*time.Second, "the waiter registered", func() bool { return waitersOn(w, k.channel(w)) == 1 })
			// The replica leaves: the count the waiter's Client took at its
			// first attempt (one replica) is less than a second old, so
			// nothing counts again before the release.
			if err := replica.Do(t, "REPLICAOF", "NO", "ONE").Error(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the primary without replicas", func() bool {
				info, err := primary.Do(t, "INFO", "replication").ToString()
				return err == nil && strings.Contains(info, "connected_slaves:0")
			})
			if err := release(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the waiter after the replica left: %v; want the grant, counted again", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiter got nothing within 10 s of the release")
			}
		})
	}
}
