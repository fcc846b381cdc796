package scriptlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TryLockWithLease and TryRLockWithLease wait at most wait, and a hold they
// grant expires on its own after lease.
func TestRWMutexTryWithLease(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-lease")
	const lease = 400 * time.Millisecond
	const slack = 3 * time.Second // a loaded machine's timers

	// A reader keeps the writer out for the whole wait.
	rctx, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := rw.TryLockWithLease(ctx, 100*time.Millisecond, lease); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLockWithLease while read-held: %v, want ErrNotAcquired", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("TryLockWithLease gave up after %s, before its 100ms wait", d)
	}
	if err := rw.RUnlock(rctx); err != nil {
		t.Fatal(err)
	}

	wctx, err := rw.TryLockWithLease(ctx, time.Second, lease)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rw.State(wctx); err != nil || st.Mode != "write" || st.Lease <= 0 || st.Lease > lease {
		t.Fatalf("write-held with lease %s: State = %+v, %v", lease, st, err)
	}
	if _, err := rw.TryRLockWithLease(WithOwner(ctx, "reader"), 0, lease); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryRLockWithLease while write-held: %v, want ErrNotAcquired", err)
	}
	// The context ends a drift margin before the server's lease.
	expires(t, wctx, lease+slack)
	if !eventually(slack, func() bool { return !exists(t, node, rw.Key()) }) {
		t.Fatal("write lock still in Redis after its lease")
	}

	rctx, err = rw.TryRLockWithLease(ctx, time.Second, lease)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rw.State(rctx); err != nil || st.Mode != "read" || st.Reads != 1 || st.Lease <= 0 || st.Lease > lease {
		t.Fatalf("read-held with lease %s: State = %+v, %v", lease, st, err)
	}
	expires(t, rctx, lease+slack)
	if !eventually(slack, func() bool { return !exists(t, node, rw.Key()) }) {
		t.Fatal("read lock still in Redis after its lease")
	}

	// Bad input is typed and changes nothing.
	keys := func() string {
		ks, err := node.Do(t, "KEYS", "*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ks)
		return strings.Join(ks, " ")
	}
	before := keys()
	for _, call := range []func() (context.Context, error){
		func() (context.Context, error) { return rw.TryLockWithLease(ctx, -time.Second, lease) },
		func() (context.Context, error) { return rw.TryLockWithLease(ctx, 0, 0) },
		func() (context.Context, error) { return rw.TryRLockWithLease(ctx, -time.Second, lease) },
		func() (context.Context, error) { return rw.TryRLockWithLease(ctx, 0, -lease) },
	} {
		if _, err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("bad input: %v, want ErrInvalidArgument", err)
		}
	}
	if after := keys(); after != before {
		t.Errorf("bad input changed the keys: %s, then %s", before, after)
	}
}

// expires waits for a lock context to end with ErrLockLost within bound.
func expires(t *testing.T, lctx context.Context, bound time.Duration) {
	t.Helper()
	select {
	case <-lctx.Done():
		if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
			t.Fatalf("lock context ended with %v, want ErrLockLost", cause)
		}
	case <-time.After(bound):
		t.Fatalf("lock context alive %s after its lease began", bound)
	}
}

// A nested read hold released before the outer one shortens the lock on the
// server to the owner's longest remaining read lease (Redisson's layout): the
// outer hold's context must end before that, not at the deadline the nested
// hold had set, or a writer could hold the lock while the reader's context
// is still live.
func TestRWMutexNestedReadReleaseShortensLoss(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-nested")
	r1, err := rw.RLockWithLease(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	r2, err := rw.RLockWithLease(r1, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	pttl, err := node.Do(t, "PTTL", rw.Key()).AsInt64()
	replied := time.Now()
	if err != nil || pttl <= 0 {
		t.Fatalf("PTTL after the nested release: %d %v", pttl, err)
	}
	lossAt := time.Unix(0, r1.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
	if expiry := replied.Add(time.Duration(pttl) * time.Millisecond); !lossAt.Before(expiry) {
		t.Fatalf("outer read hold's loss deadline is %s after the lock's expiry on the server", lossAt.Sub(expiry))
	}
	expires(t, r1, 5*time.Second)
	if !errors.Is(context.Cause(r1), ErrLockLost) {
		t.Fatalf("outer read context: cause %v, want ErrLockLost", context.Cause(r1))
	}
}
