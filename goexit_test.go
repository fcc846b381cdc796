package scriptlock

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// How a call ended, as howEnded tells.
const (
	endedReturned = "returned"
	endedPanicked = "panicked"
	endedGoexit   = "ended its goroutine (runtime.Goexit)"
)

// howEnded runs f on a goroutine of its own and tells whether f returned,
// panicked, or ended that goroutine.
func howEnded(f func()) string {
	out := make(chan string, 1)
	go func() {
		how := endedGoexit
		defer func() { out <- how }()
		returned := false
		func() {
			defer func() {
				if !returned {
					_ = recover() // a Goexit's unwinding is not stopped
				}
			}()
			f()
			returned = true
		}()
		how = endedPanicked
		if returned {
			how = endedReturned
		}
	}()
	return <-out
}

// exitingLocker is a MultiLock member of user code (a wrapper of a Mutex)
// whose Unlock, once armed, ends its goroutine, as a test's t.FailNow there
// does.
type exitingLocker struct {
	Locker
	armed atomic.Bool
}

func (l *exitingLocker) Unlock(ctx context.Context) error {
	if l.armed.Load() {
		runtime.Goexit()
	}
	return l.Locker.Unlock(ctx)
}

// TestGuardedGroupGoexitGoesOn: on a Cluster, a guarded batch's slot group
// whose call a client wrapper ends with runtime.Goexit has the Goexit go on
// on the batch's caller's goroutine, as an unbatched call's does, once the
// other groups are sent: not a batch that returns no reply for that group.
func TestGuardedGroupGoexitGoesOn(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	base := cl.Client(t)
	prefix := redistest.Prefix(t)
	var keys []string
	slots := map[uint16]bool{}
	for i := 0; len(keys) < 3; i++ {
		key := fmt.Sprintf("%s:{x%d}", prefix, i)
		cmd := base.B().Set().Key(key).Value("v").Build()
		s := cmd.Slot()
		if slots[s] {
			continue
		}
		slots[s] = true
		keys = append(keys, key)
	}
	exiting := keys[1]
	rc := newPanickyClient(base, func(c wrapperCall) bool {
		return c.method == "Dedicated.DoMulti" && len(c.args) > 1 && c.args[1] == exiting
	})
	rc.goexit.Store(true)
	c := newTestClient(t, rc)
	var calls []guardedCall
	for _, key := range keys {
		calls = append(calls, guardedCall{build: func() (rueidis.Completed, error) {
			return rc.B().Set().Key(key).Value("v").Build(), nil
		}, acks: 1})
	}
	ctx := testCtx(t, 30*time.Second)
	rc.left.Store(-1)
	var out []guardedReply
	if how := howEnded(func() { out = c.sendGuardedBatch(ctx, 100*time.Millisecond, calls) }); how != endedGoexit {
		t.Fatalf("a guarded batch whose group's call ended its goroutine %s (replies %+v); want its Goexit to go on on the caller's goroutine", how, out)
	}
	for _, key := range keys {
		if key == exiting {
			continue
		}
		if v, err := base.Do(ctx, base.B().Get().Key(key).Build()).ToString(); err != nil || v != "v" {
			t.Errorf("%s after the batch: %q, %v; want the other groups sent", key, v, err)
		}
	}
}

// TestMultiLockUnlockMemberGoexit: a MultiLock member's Unlock (user code)
// that ends its goroutine has the Goexit go on on Unlock's caller's
// goroutine once the other members are released (as a member's panic
// does), and the member is kept for an Unlock again: not a member taken
// for one released.
func TestMultiLockUnlockMemberGoexit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, c, "a"), mustMutex(t, c, "b")
	eb := &exitingLocker{Locker: b}
	ml := mustMulti(t, []Locker{a, eb})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eb.armed.Store(true)
	if how := howEnded(func() { err = ml.Unlock(lctx) }); how != endedGoexit {
		t.Fatalf("Unlock whose member's Unlock ended its goroutine %s (%v); want its Goexit to go on on the caller's goroutine", how, err)
	}
	if got := lockedAll(t, ctx, a, b); got[0] || !got[1] {
		t.Fatalf("members held after the Unlock: %v; want a released, b not", got)
	}
	// b's release has no outcome: kept for an Unlock again, as a RedLock's
	// node is, not left held (and renewed) for an owner that can no
	// longer release it.
	eb.armed.Store(false)
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again: %v; want member b released", err)
	}
	if got := lockedAll(t, ctx, a, b); got[0] || got[1] {
		t.Fatalf("members held after Unlock again: %v", got)
	}
}
