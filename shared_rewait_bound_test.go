package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A TryLock of an owner shared through its context (WithOwner) that begins
// while an earlier wait of the owner is still leaving the line ends with its
// wait time: it waited for that leave bounded by its context alone, and a
// leave held up by a stalled server kept it for the release timeout (5 s)
// past a wait of a fraction of a second.
func TestSharedRewaitEndsWithItsWait(t *testing.T) {
	t.Parallel()
	r := newRewaitRig(t, "rewait-bound")
	r.leaveToStalled(t)
	start := time.Now()
	_, err := r.m.TryLock(r.owner, 200*time.Millisecond)
	took := time.Since(start)
	r.node.Resume()
	if err == nil {
		t.Fatal("TryLock acquired a lock another client holds")
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("TryLock with a 200ms wait took %v (err %v)", took.Round(time.Millisecond), err)
	}
	if err := r.holder.Unlock(r.hctx); err != nil {
		t.Fatal(err)
	}
}

// slowLeave is a Mutex whose leave of the line is answered late: it has
// run on the server, and its reply is held until gate closes.
type slowLeave struct {
	*Mutex
	ran  chan struct{}
	gate chan struct{}
}

func (s *slowLeave) abandon(ctx context.Context, field string, wait time.Duration, place int64) {
	s.Mutex.abandon(ctx, field, wait, place)
	close(s.ran)
	<-s.gate
}

// A TryLock of an owner shared through its context whose wait time runs out
// while an earlier wait of the owner is still leaving the line takes no place
// in line it leaves behind: the earlier leave, run on the server already,
// does not take it out, and this wait, seeing that leave still under way,
// did not leave either.
func TestSharedRewaitCutLeavesNoPlace(t *testing.T) {
	t.Parallel()
	r := newRewaitRig(t, "rewait-cut")
	defer r.holder.Unlock(r.hctx)
	c, m, owner := r.c, r.m, r.owner
	placed := func() bool { return r.placed(t) }
	p := &slowLeave{Mutex: m, ran: make(chan struct{}), gate: make(chan struct{})}
	first, cancel := context.WithCancel(owner)
	done := make(chan error, 1)
	go func() {
		_, err := c.acquire(first, p, -1, m.cfg.lease)
		done <- err
	}()
	if !eventually(5*time.Second, placed) {
		t.Fatal("the first wait never took a place")
	}
	cancel()
	<-done
	select {
	case <-p.ran: // the leave ran; its reply is held
	case <-time.After(5 * time.Second):
		t.Fatal("the first wait never left the line")
	}
	if _, err := c.acquire(owner, p, 200*time.Millisecond, m.cfg.lease); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock: %v, want ErrNotAcquired", err)
	}
	close(p.gate)
	time.Sleep(100 * time.Millisecond)
	if placed() {
		t.Fatal("the owner's place in line stayed after both of its waits ended")
	}
}
