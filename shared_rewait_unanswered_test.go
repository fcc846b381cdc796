package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A TryLock of an owner shared through its context whose wait ends while an
// earlier wait of the owner is still leaving the line, on a server that
// stopped answering, made no attempt and saw no holder: its
// NotAcquiredError says the server did not answer (Unanswered), not that
// another owner held the lock with a remaining lease of 0.
func TestSharedRewaitCutUnanswered(t *testing.T) {
	t.Parallel()
	r := newRewaitRig(t, "rewait-unanswered")
	r.leaveToStalled(t)
	_, err := r.m.TryLock(r.owner, 200*time.Millisecond)
	r.node.Resume()
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("TryLock cut while the owner's leave waited for a stalled server: %v (%#v), want a NotAcquiredError with Unanswered", err, na)
	}
	if err := r.holder.Unlock(r.hctx); err != nil {
		t.Fatal(err)
	}
}

// A TryLock of an owner shared through its context whose wait ends while
// the owner's release of its last hold, sent to a server that stopped
// answering, is still under way made no attempt and saw no holder: its
// NotAcquiredError says the server did not answer (Unanswered).
func TestSharedReleaseStalledTryLockUnanswered(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "release-stalled-unanswered")
	owner := WithOwner(ctx, "worker")
	lctx, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	node.Pause()
	defer node.Resume()
	released := make(chan error, 1)
	go func() { released <- m.Unlock(lctx) }()
	if !eventually(5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, h := range c.holds {
			if h.lastReleases > 0 {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the release never began")
	}
	_, err = m.TryLock(owner, 200*time.Millisecond)
	node.Resume()
	<-released
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("TryLock while the owner's release waited for a stalled server: %v (%#v), want a NotAcquiredError with Unanswered", err, na)
	}
}
