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
	// The reading's own connection: HELLO, and from Redis 7.2 on the
	// CLIENT SETINFO calls rueidis makes with it.
	delete(calls, "hello")
	delete(calls, "client|setinfo")
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

// A hold granted while an Extend of an earlier hold of its owner was in
// flight (one that names no token: an unfenced LeanMutex whose owner was not
// shared) may have its lock's expiry set by that Extend, longer than its
// own lease. When its lease runs out, the Client must still give back what
// that call set, rather than leave the key to it.
func TestLeaseEndUndoesStrayExtend(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	l := mustLean(t, c, "lease-end-stray")
	ctx := testCtx(t, 20*time.Second)
	id := holdID(l.key, c.fieldOf(l, "job-9"))
	c.mu.Lock()
	if c.extending == nil {
		c.extending = map[holdKey]extendsInFlight{}
	}
	// The earlier hold's Extend, sent and not yet answered.
	c.extending[id] = extendsInFlight{n: 1, at: monoNanos(time.Now().Add(5 * time.Second))}
	c.mu.Unlock()
	lctx, err := l.LockWithLease(WithOwner(ctx, "job-9"), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// The Extend lands on the new hold.
	node.Do(t, "PEXPIRE", l.key, "5000")
	<-lctx.Done()
	if !eventually(time.Second, func() bool { return !exists(t, node, l.key) }) {
		t.Fatal("the key a stray Extend lengthened outlives the hold's lease")
	}
}
