package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRWWriteLeaseAfterNestedRead: a write hold with an explicit lease
// whose owner takes and gives back a nested read hold (a watchdog lease)
// before the write lease ends. The read acquisition raised the lock's
// expiry to the read lease and the read release kept it, so the lock stayed
// in write mode for the read hold's whole watchdog lease (30 s by default)
// after the write hold had ended: another writer waited for it. The read
// release now brings the expiry back to what is left of the write lease,
// and while a read lease is left it keeps the longer of the two.
func TestRWWriteLeaseAfterNestedRead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	p := sharedPrefix(t)
	// A 6 s watchdog lease stands for the default 30 s.
	c := newTestClient(t, node.Client(t), p, WithWatchdog(6*time.Second, 2*time.Second))
	c2 := newTestClient(t, node.Client(t), p)
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-nested")
	const lease = 300 * time.Millisecond
	wctx, err := rw.TryLockWithLease(ctx, 0, lease)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := rw.RLock(wctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLock(wctx)
	if err != nil {
		t.Fatal(err)
	}
	// One read hold left: the lock keeps its lease, longer than the write's.
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64(); pttl < 5000 {
		t.Errorf("with a read hold left the lock expires in %d ms, under that hold's lease", pttl)
	}
	if err := rw.RUnlock(r1); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64(); pttl > lease.Milliseconds() {
		t.Errorf("with no read hold left the lock expires in %d ms, past the %s write lease", pttl, lease)
	}
	<-wctx.Done()
	if !errors.Is(context.Cause(wctx), ErrLockLost) {
		t.Fatalf("write context ended with %v, want its lease's end", context.Cause(wctx))
	}
	start := time.Now()
	other := mustRW(t, c2, "rw-nested")
	w2, err := other.TryLock(ctx, 2*time.Second)
	if err != nil {
		t.Fatalf("another writer still shut out %s after the %s write lease ended with no read hold left: %v",
			time.Since(start).Round(time.Millisecond), lease, err)
	}
	_ = other.Unlock(w2)
}

// TestRWNestedReadReleaseKeepsMargin: the read release that brings the
// lock's expiry back to the write lease left keeps it as far past the
// writer's loss deadline as a grant does (the drift margin, 205 ms of a
// 10 s lease): it set the loss deadline itself, 3 ms short of it.
func TestRWNestedReadReleaseKeepsMargin(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-margin")
	const lease = 10 * time.Second
	wctx, err := rw.TryLockWithLease(ctx, 0, lease)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Unlock(wctx)
	r1, err := rw.RLock(wctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := rw.RUnlock(r1); err != nil {
		t.Fatal(err)
	}
	pttl, err := node.Do(t, "PTTL", rw.Key()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	var h *hold
	c.mu.Lock()
	for _, x := range c.holds {
		if x.side == sideWrite {
			h = x
		}
	}
	c.mu.Unlock()
	if h == nil {
		t.Fatal("no write hold registered")
	}
	clientLeft := time.Duration(h.lossAt.Load() - c.monoClock())
	if slack := time.Duration(pttl)*time.Millisecond - clientLeft; slack < lossMargin(lease)/2 {
		t.Errorf("the lock expires %s past the writer's loss deadline; a grant keeps the drift margin, %s", slack, lossMargin(lease))
	}
	if pttl > lease.Milliseconds() {
		t.Errorf("the lock expires in %d ms, past the write lease", pttl)
	}
}
