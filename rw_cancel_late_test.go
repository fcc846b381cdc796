package scriptlock

import (
	"errors"
	"testing"
	"time"
)

// A write Lock of an owner shared through its context gives up, and its
// withdrawal's first attempt is held up on its way (its connection broke
// under it; rueidis made it again on a new one, which withdrew the writer).
// The owner's next write Lock registers under the same member, and only
// then does the held-up attempt reach the server. It must leave that
// registration alone: it took it out, and new readers went ahead of the
// waiting writer until its next call (a third of the waiter timeout). The
// lock is held by another writer meanwhile, so that no withdrawal wakes
// the waiting Lock, whose next call would register it again at once.
func TestRWLateCancelKeepsNextWait(t *testing.T) {
	t.Parallel()
	r := newLateRig(t, "Write", "late-cancel", WithWaiterTimeout(time.Minute), WithReleaseTimeout(10*time.Second))
	px, node := r.px, r.node
	rw, other := r.m.(*RWMutex), r.rival.(*RWMutex)
	ctx := testCtx(t, 60*time.Second)
	octx := WithOwner(ctx, "job")
	// Held for a minute, without renewals.
	hctx, err := other.LockWithLease(WithOwner(ctx, "holder"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	place := func() string {
		s, err := node.Do(t, "ZSCORE", rw.writers, r.field).ToString()
		if err != nil {
			return ""
		}
		return s
	}
	giveUp := func() {
		if _, err := rw.TryLock(octx, 200*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
			t.Errorf("TryLock beside the holder = %v; want ErrNotAcquired", err)
		}
	}
	giveUp() // the scripts are loaded, the withdrawal's too
	if !eventually(5*time.Second, func() bool { return place() == "" }) {
		t.Fatal("the writer that gave up is still registered")
	}

	// The withdrawal's arguments: the writer's field, then the publish
	// command.
	px.HoldOn(r.field + "\r\n$7\r\npublish\r\n")
	gave := make(chan struct{})
	go func() { defer close(gave); giveUp() }()
	if !eventually(10*time.Second, px.HeldOn) {
		t.Fatal("the withdrawal never reached the proxy")
	}
	px.CutHeld() // made again on a new connection
	<-gave
	if !eventually(10*time.Second, func() bool { return place() == "" }) {
		t.Fatal("the withdrawal made again did not take the writer out")
	}

	locked := make(chan error, 1)
	go func() {
		lctx, err := rw.Lock(octx)
		if err == nil {
			err = rw.Unlock(lctx)
		}
		locked <- err
	}()
	// Registered, and settled: its attempt once subscribed has run too (a
	// registration taken out after a later attempt would be back).
	last, since := "", time.Now()
	if !eventually(10*time.Second, func() bool {
		if p := place(); p != last {
			last, since = p, time.Now()
		}
		return last != "" && time.Since(since) > 500*time.Millisecond
	}) {
		t.Fatal("the owner's next write Lock never registered for good")
	}
	calls := evalshaCalls(t, node)
	px.Thaw() // the held-up attempt reaches the server now
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if place() == "" {
			t.Fatal("the held-up withdrawal of the wait that gave up took out the registration of the owner's next write Lock")
		}
	}
	if evalshaCalls(t, node) == calls {
		t.Fatal("the held-up withdrawal never reached the server: the test does not test it")
	}
	if err := other.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("the owner's write Lock, once the holder left: %v", err)
	}
}
