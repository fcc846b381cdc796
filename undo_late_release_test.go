package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry whose reply is lost is undone: the undo finds one hold more on
// the server than the Client knows of and gives it back. When that release
// hangs on a connection rueidis then drops as dead, the undo reads the count
// again on a new connection, still finds the extra hold, and gives it back
// again; the hung release reaching the server later must not take the hold
// the Client still counts (and whose context is live) with it.
func TestUndoLateReleaseKeepsHold(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each kind has its own server and proxy
			testUndoLateReleaseKeepsHold(t, kind)
		})
	}
}

func testUndoLateReleaseKeepsHold(t *testing.T, kind string) {
	rig := newLateRig(t, kind, "undo-late", WithReleaseTimeout(500*time.Millisecond))
	node, px, m, rival, field := rig.node, rig.px, rig.m, rig.rival, rig.field
	warmShared(t, m)
	ctx := testCtx(t, 60*time.Second)
	octx := WithOwner(ctx, "job")
	outer, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	px.FreezeReplies() // the re-entry runs; its reply never comes
	type result struct {
		ctx context.Context
		err error
	}
	done := make(chan result, 1)
	go func() {
		rctx, cancel := context.WithTimeout(octx, 300*time.Millisecond)
		defer cancel()
		in, err := m.LockWithLease(rctx, 30*time.Second)
		done <- result{in, err}
	}()
	if !eventually(5*time.Second, func() bool {
		n, _ := node.Do(t, "HGET", m.Key(), field).AsInt64()
		return n == 2
	}) {
		t.Fatal("the re-entry never reached the server")
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the re-entry still waiting")
	}
	px.DropAll() // the undo's count is read again on a new connection
	px.Thaw()
	px.HoldOn("redisson_unlock_latch") // and the undo's release hangs
	if !eventually(10*time.Second, func() bool { return fieldCount(t, node, m.Key(), field) == 1 }) {
		t.Fatal("the re-entry was never undone")
	}
	if !px.HeldOn() {
		t.Fatal("the undo's release was never held back: the test does not test it")
	}
	time.Sleep(time.Second)
	t.Logf("count before the hung release: %d", fieldCount(t, node, m.Key(), field))
	px.Thaw() // the hung release reaches the server now
	time.Sleep(200 * time.Millisecond)
	if r.err == nil {
		if err := m.Unlock(r.ctx); err != nil {
			t.Logf("unlock of the re-entry: %v", err)
		}
	} else {
		t.Logf("re-entry: %v", r.err)
	}
	time.Sleep(100 * time.Millisecond)
	t.Logf("re-entry err %v, outer %v, count %d", r.err, context.Cause(outer), fieldCount(t, node, m.Key(), field))
	if outer.Err() != nil {
		return // the hold ended: its context no longer vouches for it
	}
	if rctx, err := rival.TryLock(ctx, 0); err == nil {
		defer rival.Unlock(rctx)
		t.Fatalf("another owner took the lock while the owner's hold context was live (server count %v)",
			fieldCount(t, node, m.Key(), field))
	}
}

// fieldCount is a lock hash's count for field (0 when missing).
func fieldCount(t testing.TB, n *redistest.Node, key, field string) int64 {
	t.Helper()
	v, err := n.Do(t, "HGET", key, field).AsInt64()
	if err != nil && !rueidis.IsRedisNil(err) {
		t.Fatal(err)
	}
	return v
}

// probeLocker is a lock with a lease and its key.
type probeLocker interface {
	Locker
	LockWithLease(context.Context, time.Duration) (context.Context, error)
	Key() string
}

// rwRead is an RWMutex's read side as a probeLocker.
type rwRead struct{ *RWMutex }

func (r rwRead) Lock(ctx context.Context) (context.Context, error) { return r.RLock(ctx) }
func (r rwRead) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return r.TryRLock(ctx, wait)
}
func (r rwRead) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	return r.RLockWithLease(ctx, lease)
}
func (r rwRead) Unlock(ctx context.Context) error { return r.RUnlock(ctx) }
