package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A semaphore's Acquire whose attempt shares its connection with another
// call that has a shorter deadline, on a slow link: rueidis fails every call
// on the connection with context.DeadlineExceeded when that call's deadline
// breaks it. As a lock's, the attempt's outcome is unknown, as on any broken
// connection, and the wait goes on; it failed with "context deadline
// exceeded" while its own context had seconds left.
func TestSemaphoreBesideForeignDeadline(t *testing.T) {
	t.Parallel()
	const oneWay = 200 * time.Millisecond
	for _, kind := range []string{"Semaphore", "PermitSemaphore"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			rc := px.Client(t)
			c := newTestClient(t, rc)
			var acquire func(ctx context.Context) error
			switch kind {
			case "Semaphore":
				s, err := c.Semaphore("sem")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.TrySetPermits(testCtx(t, 10*time.Second), 2); err != nil {
					t.Fatalf("TrySetPermits: %v", err)
				}
				acquire = func(ctx context.Context) error { return s.Acquire(ctx, 1) }
			default:
				s, err := c.PermitSemaphore("sem")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.TrySetPermits(testCtx(t, 10*time.Second), 2); err != nil {
					t.Fatalf("TrySetPermits: %v", err)
				}
				acquire = func(ctx context.Context) error { _, err := s.Acquire(ctx, time.Minute); return err }
			}
			// Scripts loaded, and the connection used with deadlines only.
			if err := acquire(testCtx(t, 10*time.Second)); err != nil {
				t.Fatalf("warm-up Acquire: %v", err)
			}
			px.Delay(oneWay)
			// Alone on the connection, with a deadline shorter than its
			// round trip: it breaks the connection under the next call.
			done := make(chan struct{})
			go func() {
				defer close(done)
				short, cancel := context.WithTimeout(context.Background(), oneWay)
				defer cancel()
				rc.Do(short, rc.B().Ping().Build())
			}()
			time.Sleep(oneWay / 4)
			ctx := testCtx(t, 20*time.Second)
			start := time.Now()
			err := acquire(ctx)
			<-done
			if err != nil && ctx.Err() == nil {
				t.Fatalf("Acquire failed after %v of its 20 s context: %v", time.Since(start).Round(time.Millisecond), err)
			}
		})
	}
}
