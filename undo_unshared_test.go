package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stallingClient is a rueidis client that, once armed, runs before ahead of
// the next hold count read by an undo (MutexState, which an undo sends as
// EVALSHA: readPrimary), and after once the script call that follows it
// (the undo's release) has returned.
type stallingClient struct {
	rueidis.Client
	armed, next   atomic.Bool
	before, after func()
}

func (s *stallingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	cs := cmd.Commands()
	if len(cs) < 2 {
		return s.Client.Do(ctx, cmd)
	}
	switch {
	case isMutexState(cs):
		if s.armed.CompareAndSwap(true, false) {
			s.before()
			s.next.Store(true)
		}
	case cs[0] == "EVALSHA" || cs[0] == "EVAL":
		if s.next.CompareAndSwap(true, false) {
			defer s.after()
		}
	}
	return s.Client.Do(ctx, cmd)
}

// isMutexState reports a call of the MutexState script, however sent.
func isMutexState(cs []string) bool {
	for _, sc := range generated.Scripts {
		if sc.Name == "MutexState" {
			return cs[1] == sc.SHA1 || cs[1] == sc.Source
		}
	}
	return false
}

// A hold that is not shared runs out of lease, and the background undo of
// what a renewal or Extend in flight may have extended starts. Its owner
// (the id read from the ended hold's context) locks again after the undo
// looked for acquisitions in flight and before it read the owner's hold
// count: the server has granted the new hold, the Client has yet to register
// it. The undo must not release that new hold, whose context lives on.
func TestUndoOfUnsharedHoldSparesOwnersNewGrant(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	key := func(m *Mutex) bool {
		n, err := node.Do(t, "EXISTS", m.Key()).AsInt64()
		return err == nil && n == 1
	}
	rc := &stallingClient{Client: node.Client(t)}
	c := newTestClient(t, rc)
	m := mustMutex(t, c, "undo-unshared")
	warm(t, m)
	ctx := testCtx(t, 20*time.Second)
	const lease = 300 * time.Millisecond
	first, err := m.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	// An Extend has set the lock's expiry since the grant: the undo runs at
	// the loss deadline (a hold only its grant set is left to expire).
	if err := m.Extend(ctx, first, lease); err != nil {
		t.Fatal(err)
	}
	owner, _ := OwnerFrom(first)
	granted, released := make(chan struct{}), make(chan struct{})
	type result struct {
		lctx context.Context
		err  error
	}
	second := make(chan result, 1)
	c.setGrantHook(func() {
		close(granted)
		// Registered once the undo's release has returned; an undo that
		// finds the owner's acquisition in flight after its read waits for
		// the grant to register instead, and makes no release.
		select {
		case <-released:
		case <-time.After(500 * time.Millisecond):
		}
	})
	defer func() { c.setGrantHook(nil) }()
	rc.before = func() {
		// The ended hold is gone on the server; the owner locks again.
		if !eventually(3*time.Second, func() bool { return !key(m) }) {
			t.Error("the ended hold is still on the server")
		}
		go func() {
			lctx, err := m.LockWithLease(WithOwner(ctx, owner), 20*time.Second)
			second <- result{lctx, err}
		}()
		<-granted
	}
	rc.after = func() { close(released) }
	rc.armed.Store(true)
	r := <-second
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer m.Unlock(r.lctx)
	time.Sleep(50 * time.Millisecond)
	if !key(m) && r.lctx.Err() == nil {
		t.Fatal("the undo of the ended hold released the owner's new hold, whose context is alive")
	}
}
