package scriptlock

import (
	"context"
	"testing"
	"time"
)

// As TestUndoLateReleaseKeepsHold, but the owner gives up one of its holds
// while the undo's release hangs: the next undo finds other counts (one
// hold fewer on the server and here) and must still name the hung release's
// latch, or both give back a hold and the owner's last one goes with them,
// its context live.
func TestUndoLateReleaseAfterUnlock(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each kind has its own server and proxy
			testUndoLateReleaseAfterUnlock(t, kind)
		})
	}
}

func testUndoLateReleaseAfterUnlock(t *testing.T, kind string) {
	r := newLateRig(t, kind, "undo-moved", WithReleaseTimeout(500*time.Millisecond))
	node, px, c, m, rival, field := r.node, r.px, r.c, r.m, r.rival, r.field
	unlockHandle := func(t *testing.T, kind string, c *Client) probeLocker {
		opts := []LockOption{WithReleaseTimeout(10 * time.Second)}
		switch kind {
		case "Mutex":
			return mustMutex(t, c, "undo-moved", opts...)
		case "FairMutex":
			return mustFair(t, c, "undo-moved", opts...)
		case "Write":
			return mustRW(t, c, "undo-moved", opts...)
		}
		return rwRead{mustRW(t, c, "undo-moved", opts...)}
	}
	warmShared(t, m)
	ctx := testCtx(t, 60*time.Second)
	octx := WithOwner(ctx, "job")
	outer, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	mid, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	px.FreezeReplies() // the third hold runs; its reply never comes
	done := make(chan error, 1)
	go func() {
		rctx, cancel := context.WithTimeout(octx, 300*time.Millisecond)
		defer cancel()
		in, err := m.LockWithLease(rctx, 30*time.Second)
		if err == nil {
			err = m.Unlock(in)
		}
		done <- err
	}()
	if !eventually(5*time.Second, func() bool { return fieldCount(t, node, m.Key(), field) == 3 }) {
		t.Fatal("the re-entry never reached the server")
	}
	select {
	case err := <-done:
		t.Logf("re-entry: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the re-entry still waiting")
	}
	// The undos in the background fail while replies are held back, so
	// that they pause longer and longer (up to a second) between attempts.
	time.Sleep(3 * time.Second)
	px.DropAll()
	px.Thaw()
	px.HoldOn("redisson_unlock_latch") // the undo's release hangs
	if !eventually(10*time.Second, px.HeldOn) {
		t.Fatal("the undo's release was never held back: the test does not test it")
	}
	// The owner gives up one hold meanwhile, through a handle with a longer
	// release timeout: its call waits on the hung connection too, and goes
	// on on a new one once rueidis gave up on that, before the undo reads
	// the count again.
	if err := unlockHandle(t, kind, c).Unlock(mid); err != nil {
		t.Fatalf("Unlock of the second hold: %v", err)
	}
	t.Logf("count after Unlock: %d", fieldCount(t, node, m.Key(), field))
	if !eventually(10*time.Second, func() bool { return fieldCount(t, node, m.Key(), field) == 1 }) {
		t.Fatalf("the re-entry was never undone: count %d", fieldCount(t, node, m.Key(), field))
	}
	time.Sleep(time.Second)
	px.Thaw() // the hung release reaches the server now
	time.Sleep(300 * time.Millisecond)
	t.Logf("outer %v, count %d", context.Cause(outer), fieldCount(t, node, m.Key(), field))
	if outer.Err() != nil {
		return // the hold ended: its context no longer vouches for it
	}
	if rctx, err := rival.TryLock(ctx, 0); err == nil {
		defer rival.Unlock(rctx)
		t.Fatalf("another owner took the lock while the owner's hold context was live (server count %v)",
			fieldCount(t, node, m.Key(), field))
	}
}
