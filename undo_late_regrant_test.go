package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An acquisition whose reply is lost is undone. When the undo's release
// hangs on a connection rueidis then drops as dead, and the hold it was to
// give back goes away meanwhile (ForceUnlock, or its lease ran out), its
// retry finds nothing and records nothing. The owner then takes the lock
// afresh; the hung release reaching the server later must not take that
// grant, which the Client counts and whose context is live.
func TestUndoLateReleaseSparesRegrant(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "RedissonFair", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each kind has its own server and proxy
			testUndoLateReleaseSparesRegrant(t, kind, false)
		})
	}
}

// The same when the fencing-token counter had run out its idle time
// (WithFenceIdle) while the hold lived: the undo reads no counter, and the
// owner's fresh grant starts one again.
func TestUndoLateReleaseSparesRegrantAfterCounterExpiry(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "RedissonFair", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testUndoLateReleaseSparesRegrant(t, kind, true)
		})
	}
}

func testUndoLateReleaseSparesRegrant(t *testing.T, kind string, expired bool) {
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := droppingClient(t, px.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix, WithReleaseTimeout(500*time.Millisecond))
	other := newTestClient(t, node.Client(t), prefix)
	var m, rival probeLocker
	field := c.id + ":job"
	switch kind {
	case "Mutex":
		m, rival = mustMutex(t, c, "undo-regrant"), mustMutex(t, other, "undo-regrant")
	case "FairMutex":
		m, rival = mustFair(t, c, "undo-regrant"), mustFair(t, other, "undo-regrant")
	case "RedissonFair": // Redisson's RFairLock queue protocol
		q := WithRedissonFairQueue(5 * time.Second)
		m, rival = mustFair(t, c, "undo-regrant", q), mustFair(t, other, "undo-regrant", q)
	case "Read":
		m, rival = rwRead{mustRW(t, c, "undo-regrant")}, mustRW(t, other, "undo-regrant")
	default:
		m, rival = mustRW(t, c, "undo-regrant"), mustRW(t, other, "undo-regrant")
		field += ":write"
	}
	warmShared(t, m)
	ctx := testCtx(t, 60*time.Second)
	octx := WithOwner(ctx, "job")
	px.FreezeReplies() // the acquisition runs; its reply never comes
	done := make(chan error, 1)
	go func() {
		rctx, cancel := context.WithTimeout(octx, 300*time.Millisecond)
		defer cancel()
		_, err := m.LockWithLease(rctx, 30*time.Second)
		done <- err
	}()
	if !eventually(5*time.Second, func() bool { return fieldCount(t, node, m.Key(), field) == 1 }) {
		t.Fatal("the acquisition never reached the server")
	}
	if expired {
		node.Do(t, "DEL", redissonName("redisson_lock_token", m.Key()))
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the acquisition whose reply was lost succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the acquisition still waiting")
	}
	px.DropAll() // the undo's count is read again on a new connection
	px.Thaw()
	px.HoldOn("redisson_unlock_latch") // and the undo's release hangs
	if !eventually(10*time.Second, func() bool { return px.HeldOn() }) {
		t.Fatal("the undo's release was never held back: the test does not test it")
	}
	// The hold goes away before the undo's retry reaches it.
	node.Do(t, "DEL", m.Key())
	time.Sleep(2 * time.Second) // the undo's retry finds nothing to undo
	held, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	px.Thaw() // the hung release reaches the server now
	// Long enough for the held bytes to reach the server and run.
	time.Sleep(time.Second)
	if held.Err() != nil {
		t.Fatalf("the fresh hold ended: %v", context.Cause(held))
	}
	tok, _ := Fence(held)
	if err := m.Unlock(held); err != nil {
		t.Fatalf("the fresh hold (token %d) was taken from the server under its live context: %v (server count now %d)",
			tok, err, fieldCount(t, node, m.Key(), field))
	}
	if rctx, err := rival.TryLock(ctx, 5*time.Second); err != nil {
		t.Fatalf("the lock stayed held after the owner's last Unlock (server count %d): %v", fieldCount(t, node, m.Key(), field), err)
	} else {
		rival.Unlock(rctx)
	}
}
