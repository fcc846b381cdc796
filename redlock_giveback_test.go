package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Once a RedLock's context ends with ErrLockLost, the nodes that still hold
// it are given back without an Unlock: their watchdogs must not keep a
// minority of nodes locked for as long as the process runs. A later Unlock
// answers ErrNotHeld, as for a lost Mutex.
func TestRedLockQuorumLossGivesBack(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	lctx := lockEveryNode(t, ctx, r) // node 2's give-back is the one checked
	for _, i := range []int{0, 1} {
		if _, err := mustMutex(t, cs[i], "job").ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context alive with 1 of 3 nodes holding")
	}
	if !eventually(3*time.Second, func() bool { return !heldOn(t, r, nodes, 2)[2] }) {
		t.Fatalf("node 2 still holds the lock 3s after the RedLock was lost (%v), with no Unlock", context.Cause(lctx))
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
}

// A RedLock locked with a context that then ends with ErrLockLost (the
// context of another lock, lost) is not lost itself: like a Mutex, it stays
// held on its nodes until Unlock.
func TestRedLockParentLostKeepsHold(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	other := mustMutex(t, cs[0], "other")
	octx, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	time.Sleep(200 * time.Millisecond)
	if h := heldOn(t, r, nodes, 0, 1, 2); !h[0] || !h[1] || !h[2] {
		t.Fatalf("RedLock given back when the context it was locked with ended (%v): held = %v", context.Cause(lctx), h)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// stallRelease is a rueidis client that, while armed, holds a Mutex release
// (MutexRelease, MutexReleaseLast) for stall before handing it on with its
// context: a release goroutine descheduled on a loaded machine.
type stallRelease struct {
	rueidis.Client
	armed atomic.Bool
	stall time.Duration
}

func (s *stallRelease) held(cs []string) bool {
	if !s.armed.Load() || len(cs) < 2 || (cs[0] != "EVALSHA" && cs[0] != "EVAL") {
		return false
	}
	for _, sc := range generated.Scripts {
		if sc.Name == "MutexRelease" || sc.Name == "MutexReleaseLast" {
			if cs[1] == sc.SHA1 || cs[1] == sc.Source {
				return true
			}
		}
	}
	return false
}

func (s *stallRelease) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if s.held(cmd.Commands()) {
		time.Sleep(s.stall)
	}
	return s.Client.Do(ctx, cmd)
}

func (s *stallRelease) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		if s.held(cmd.Commands()) {
			time.Sleep(s.stall)
			break
		}
	}
	return s.Client.DoMulti(ctx, multi...)
}

// A failed attempt's grant is given back even when its release reaches the
// node past the node timeout: the caller has stopped waiting by then, and a
// grant left behind keeps every owner off that node until its lease ends.
// Here node 0's release is held back 400 ms (a goroutine descheduled that
// long on a loaded machine), past the 150 ms node timeout; nodes 1 and 2 are
// held by another owner.
func TestRedLockGiveBackOutlastsNodeTimeout(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	slow := &stallRelease{Client: nodes[0].Client(t), stall: 400 * time.Millisecond}
	cs := []*Client{
		newTestClient(t, slow, prefix),
		newTestClient(t, nodes[1].Client(t), prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	ctx := testCtx(t, 20*time.Second)
	const nodeTimeout = 150 * time.Millisecond
	r := mustRedLock(t, "slow-giveback", cs, WithNodeTimeout(nodeTimeout))
	for _, i := range []int{1, 2} {
		if _, err := r.nodes[i].TryLock(WithOwner(ctx, "other"), 0); err != nil {
			t.Fatal(err)
		}
	}
	// Node 0's connection made and its scripts loaded first, so that its
	// grant comes within the node timeout.
	warm(t, mustMutex(t, cs[0], "warm"))
	slow.armed.Store(true)
	if _, err := r.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock with 2 of 3 nodes held by another owner: %v, want ErrNotAcquired", err)
	}
	if !eventually(3*time.Second, func() bool { return !heldOn(t, r, nodes, 0)[0] }) {
		t.Fatal("node 0's grant, its release held back past the node timeout, still held 3s after the failed TryLock")
	}
}
