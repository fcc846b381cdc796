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

// leanStallingClient is stallingClient for a LeanMutex: once armed, it runs
// before ahead of the script call that follows the next LeanState read (an
// undo's hold count), that call being the undo's release, and after once
// that call has returned.
type leanStallingClient struct {
	rueidis.Client
	armed, next   atomic.Bool
	before, after func()
}

func (s *leanStallingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	cs := cmd.Commands()
	if len(cs) < 2 {
		return s.Client.Do(ctx, cmd)
	}
	switch {
	case isScript(cs, "LeanState"):
		if s.armed.CompareAndSwap(true, false) {
			s.next.Store(true)
		}
	case cs[0] == "EVALSHA" || cs[0] == "EVAL":
		if s.next.CompareAndSwap(true, false) {
			s.before()
			defer s.after()
		}
	}
	return s.Client.Do(ctx, cmd)
}

// isScript reports a call of the named script, however sent.
func isScript(cs []string, name string) bool {
	for _, sc := range generated.Scripts {
		if sc.Name == name {
			return cs[1] == sc.SHA1 || cs[1] == sc.Source
		}
	}
	return false
}

// An unfenced LeanMutex hold that is not shared (it drew no token) runs out
// of lease after an Extend, and the background undo starts. It finds the
// ended hold still on the server; before its release is sent, the key
// expires and its owner (the id read from the ended hold's context) locks
// again: the server has granted the new hold, the Client has yet to register
// it. The undo must not delete that new hold, whose context lives on.
func TestLeanUndoOfUnsharedHoldSparesOwnersNewGrant(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &leanStallingClient{Client: node.Client(t)}
	c := newTestClient(t, rc)
	l := mustLean(t, c, "lean-undo-relock")
	held := func() bool {
		n, err := node.Do(t, "EXISTS", l.key).AsInt64()
		return err == nil && n == 1
	}
	ctx := testCtx(t, 20*time.Second)
	// Scripts loaded, so that none is sent as EVAL mid-test.
	for range 2 {
		w, err := l.LockWithLease(WithOwner(ctx, "warm"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Extend(ctx, w, time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := l.holdsOf(ctx, "warm"); err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(w); err != nil {
			t.Fatal(err)
		}
		u, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(u); err != nil {
			t.Fatal(err)
		}
	}
	node.Do(t, "DEL", l.fenceKey()) // no token drawn yet
	// Long enough that the key's expiry is moved and the undo's read armed
	// before the loss deadline, on a loaded machine too.
	const lease = 2 * time.Second
	first, err := l.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, first, lease); err != nil {
		t.Fatal(err)
	}
	// The server lease outlasts the loss deadline, as one a renewal or
	// Extend in flight set would: the undo finds the ended hold there and
	// sends its release. (With the lease the Extend set, it ends a drift
	// margin after the deadline, and an undo slower than that on a loaded
	// machine finds nothing to give back.)
	node.Do(t, "PEXPIRE", l.key, "20000")
	owner, _ := OwnerFrom(first)
	granted, released := make(chan struct{}), make(chan struct{})
	type result struct {
		lctx context.Context
		err  error
	}
	second := make(chan result, 1)
	c.setGrantHook(func() {
		close(granted)
		// Registered only once the undo's release has returned.
		select {
		case <-released:
		case <-time.After(5 * time.Second):
			t.Error("the undo made no release")
		}
	})
	defer func() { c.setGrantHook(nil) }()
	rc.before = func() {
		node.Do(t, "DEL", l.key) // the ended hold expires on the server
		go func() {
			lctx, err := l.LockWithLease(WithOwner(ctx, owner), 20*time.Second)
			second <- result{lctx, err}
		}()
		<-granted
	}
	rc.after = func() { close(released) }
	rc.armed.Store(true)
	var r result
	select {
	case r = <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("no undo after the loss deadline")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer l.Unlock(r.lctx)
	time.Sleep(50 * time.Millisecond)
	if !held() && r.lctx.Err() == nil {
		t.Fatal("the undo of the ended hold deleted the owner's new hold, whose context is alive")
	}
}
