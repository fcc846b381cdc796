package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A re-entrant Unlock whose first attempt hangs on a connection rueidis then
// drops as dead is made again on a new one under the same latch; when the
// first attempt reaches the server after that repeat, it must change
// nothing: it gave up a second hold, and the owner's last hold went with it
// while its context was live.
func TestReleaseLateFirstAttempt(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) { testReleaseLateFirstAttempt(t, kind) })
	}
}

func testReleaseLateFirstAttempt(t *testing.T, kind string) {
	r := newLateRig(t, kind, "late-first", WithReleaseTimeout(10*time.Second))
	px, m, rival := r.px, r.m, r.rival
	warmShared(t, m)
	ctx := testCtx(t, 60*time.Second)
	octx := WithOwner(ctx, "job")
	outer, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.LockWithLease(octx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	px.HoldOn("redisson_unlock_latch") // the release's first attempt hangs
	if err := m.Unlock(inner); err != nil {
		t.Fatalf("Unlock of the re-entry: %v", err)
	}
	if !px.HeldOn() {
		t.Fatal("the release was never held back: the test does not test it")
	}
	px.Thaw() // the first attempt reaches the server now
	time.Sleep(300 * time.Millisecond)
	if outer.Err() != nil {
		t.Logf("outer: %v", context.Cause(outer))
		return // the hold ended: its context no longer vouches for it
	}
	if rctx, err := rival.TryLock(ctx, 0); err == nil {
		defer rival.Unlock(rctx)
		t.Fatal("another owner took the lock while the owner's hold context was live")
	}
}
