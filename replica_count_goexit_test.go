package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplicaCountGoexit: a client wrapper that ends the goroutine of the
// replica count's call (Nodes, or a node's INFO) with runtime.Goexit, as a
// test's t.FailNow there does, leaves the count as one that no node
// answered, as its panic does: the acquisition waiting for the count goes
// on at once, guarded for a replica. It waited for a count that never came
// until its own context ended (without a deadline, for ever).
func TestReplicaCountGoexit(t *testing.T) {
	for _, call := range []string{"Nodes", "INFO"} {
		t.Run(call, func(t *testing.T) {
			t.Parallel()
			primary, _ := redistest.Replicated(t)
			rc := newPanickyNodes(primary.Client(t), func(c wrapperCall) bool {
				return c.method == call || commandDo(call)(c)
			})
			rc.goexit.Store(true)
			rc.left.Store(-1)
			c := newTestClient(t, rc, loadedGuard())
			m := mustMutex(t, c, "count-goexit")
			const bound = 8 * time.Second
			ctx := testCtx(t, bound)
			start := time.Now()
			var l context.Context
			err := acked(func() (err error) {
				l, err = m.TryLock(ctx, 0)
				return err
			})
			if err != nil {
				t.Fatalf("TryLock whose replica count's %s ended its goroutine: %v after %v; want the lock, the count taken as not answered",
					call, err, time.Since(start).Round(time.Millisecond))
			}
			if took := time.Since(start); took > bound/2 {
				t.Errorf("TryLock took %v; want it not to wait for a count that never comes", took.Round(time.Millisecond))
			}
			if err := m.Unlock(l); err != nil {
				t.Fatal(err)
			}
			if rc.picked.Load() == 0 {
				t.Fatalf("no %s call was made", call)
			}
		})
	}
}
