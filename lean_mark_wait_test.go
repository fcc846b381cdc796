package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// markStallingClient holds, once armed, the next GET of key (the undo's
// read of the token counter, LeanMutex.undoMark) until gate closes or its
// context ends.
type markStallingClient struct {
	rueidis.Client
	key     string
	armed   atomic.Bool
	reading chan struct{}
	gate    chan struct{}
}

func (s *markStallingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) == 2 && cs[0] == "GET" && cs[1] == s.key && s.armed.CompareAndSwap(true, false) {
		close(s.reading)
		select {
		case <-s.gate:
		case <-ctx.Done():
		}
	}
	return s.Client.Do(ctx, cmd)
}

// A Lock of the owner of an unfenced LeanMutex hold that ran out of lease
// after an Extend waits while the background undo reads the token counter
// (Client.marking), but no longer than its own context: a slow read kept a
// TryLock with a context of a fraction of a second for up to the release
// timeout.
func TestLeanUndoMarkWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &markStallingClient{Client: node.Client(t), reading: make(chan struct{}), gate: make(chan struct{})}
	c := newTestClient(t, rc)
	l := mustLean(t, c, "lean-mark-wait")
	rc.key = l.fenceKey()
	ctx := testCtx(t, 20*time.Second)
	const lease = 3 * time.Second
	first, err := l.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, first, lease); err != nil {
		t.Fatal(err)
	}
	owner, _ := OwnerFrom(first)
	rc.armed.Store(true)
	defer close(rc.gate)
	select {
	case <-rc.reading:
	case <-time.After(8 * time.Second):
		t.Fatal("no undo read the token counter after the loss deadline")
	}
	tctx, cancel := context.WithTimeout(WithOwner(ctx, owner), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	lctx, err := l.TryLock(tctx, 0)
	took := time.Since(start)
	if err == nil {
		l.Unlock(lctx)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("TryLock with a 200ms context took %v (err %v)", took.Round(time.Millisecond), err)
	}
}
