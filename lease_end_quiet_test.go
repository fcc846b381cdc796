package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// serverCalls is every command the node has run, less INFO, HELLO and PING (the
// reading itself, rueidis' keep-alive).
func serverCalls(t *testing.T, node *redistest.Node) (map[string]int64, int64) {
	t.Helper()
	calls := commandCalls(t, node)
	delete(calls, "info")
	delete(calls, "ping")
	delete(calls, "hello") // the reading's own connection
	var n int64
	for _, v := range calls {
		n += v
	}
	return calls, n
}

// An explicit lease running out before Unlock (Redisson's lock(leaseTime)
// used as the release) ends the hold here and leaves the key to its lease on
// the server: no call to Redis, and the lock is not freed before that lease.
func TestLeaseEndCallsNothing(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			l := lc.make(t, c, "lease-end")
			ctx := testCtx(t, 20*time.Second)
			lctx, err := lc.withLease(l, ctx, 500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			<-lctx.Done()
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("cause = %v, want ErrLockLost", cause)
			}
			before, n0 := serverCalls(t, node)
			time.Sleep(1500 * time.Millisecond) // past the undo and two of its rechecks
			after, n1 := serverCalls(t, node)
			if n1 != n0 {
				diff := map[string]int64{}
				for k, v := range after {
					if d := v - before[k]; d != 0 {
						diff[k] = d
					}
				}
				t.Fatalf("%d calls to Redis after the lease ended: %v; want none", n1-n0, diff)
			}
		})
	}
}
