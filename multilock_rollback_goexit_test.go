package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockRollbackGoexit: a failed MultiLock attempt whose give-back
// of a member (user code) ends its goroutine has the Goexit go on on the
// caller's goroutine once the other members are given back: not a caller
// left waiting for the give-back until its bound, then told of the
// attempt's failure alone.
func TestMultiLockRollbackGoexit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	a, b, other := mustMutex(t, c, "a"), mustMutex(t, c, "b"), mustMutex(t, c, "c")
	hctx, err := other.Lock(ctx) // another owner holds c: the attempt fails there
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock(hctx)
	eb := &exitingLocker{Locker: b}
	eb.armed.Store(true)
	ml := mustMulti(t, []Locker{a, eb, mustMutex(t, c, "c")})
	start := time.Now()
	if how := howEnded(func() { _, err = ml.TryLock(ctx, 0) }); how != endedGoexit {
		t.Fatalf("TryLock whose give-back of a member ended its goroutine %s after %v (%v); want its Goexit to go on on the caller's goroutine",
			how, time.Since(start).Round(time.Millisecond), err)
	}
	if got := lockedAll(t, ctx, a); got[0] {
		t.Fatal("member a held after the failed attempt")
	}
}
