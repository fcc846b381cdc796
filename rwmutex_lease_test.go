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
	t.Parallel()
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
	t.Parallel()
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
	lossAt := monoTime(r1.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
	if expiry := replied.Add(time.Duration(pttl) * time.Millisecond); !lossAt.Before(expiry) {
		t.Fatalf("outer read hold's loss deadline is %s after the lock's expiry on the server", lossAt.Sub(expiry))
	}
	expires(t, r1, 5*time.Second)
	if !errors.Is(context.Cause(r1), ErrLockLost) {
		t.Fatalf("outer read context: cause %v, want ErrLockLost", context.Cause(r1))
	}
}

// While a writer also holds a read lock with a longer lease, nothing the
// write side does (its watchdog renewals and the drop to read mode, Extend to
// a shorter lease) and no RExtend of that read hold lets the lock expire
// under the live read hold: another owner must not get the write lock.
func TestRWMutexWriterKeepsOwnReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []LockOption
		// run takes the write and a read hold with the same owner, does what
		// the case is about, and returns the read hold's context.
		run func(t *testing.T, ctx context.Context, rw *RWMutex) context.Context
	}{{
		name: "downgrade after watchdog renewals",
		// A lease a renewal late on a loaded machine still meets (300 ms
		// was missed, the write hold lost before its Unlock).
		opts: []LockOption{WithWatchdog(1200*time.Millisecond, 200*time.Millisecond)},
		run: func(t *testing.T, ctx context.Context, rw *RWMutex) context.Context {
			wctx, rctx := writeThenRead(t, ctx, rw, 0, 5*time.Second)
			time.Sleep(500 * time.Millisecond) // the write hold's watchdog renews at least once
			if err := rw.Unlock(wctx); err != nil {
				t.Fatal(err)
			}
			return rctx
		},
	}, {
		name: "RExtend in write mode",
		run: func(t *testing.T, ctx context.Context, rw *RWMutex) context.Context {
			_, rctx := writeThenRead(t, ctx, rw, 300*time.Millisecond, 300*time.Millisecond)
			if err := rw.RExtend(ctx, rctx, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			return rctx
		},
	}, {
		name: "write Extend to a shorter lease",
		run: func(t *testing.T, ctx context.Context, rw *RWMutex) context.Context {
			wctx, rctx := writeThenRead(t, ctx, rw, 5*time.Second, 5*time.Second)
			if err := rw.Extend(ctx, wctx, 200*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			return rctx
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			ctx := testCtx(t, 10*time.Second)
			name := "rw:" + strings.ReplaceAll(tc.name, " ", "-")
			rw := mustRW(t, newTestClient(t, node.Client(t), prefix), name, tc.opts...)
			other := mustRW(t, newTestClient(t, node.Client(t), prefix), name)
			rctx := tc.run(t, ctx, rw)
			time.Sleep(600 * time.Millisecond) // past every write lease above
			if err := context.Cause(rctx); err != nil {
				t.Fatalf("read hold (lease 5s) ended: %v", err)
			}
			if w2, err := other.TryLock(ctx, 0); err == nil {
				_ = other.Unlock(w2)
				t.Fatal("another owner got the write lock while the read hold (lease 5s) is live")
			}
		})
	}
}

// A writer that also reads gives up one of two nested read holds (shorter
// leases than its write lease) while it holds the write lock: the lock must
// keep the write lease, which has no lease key of its own. Redisson's read
// release sets the lock's expiry to the longest read lease left here too, so
// the lock expired under the live writer and another owner took it.
func TestRWMutexReadReleaseKeepsWriteLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 20*time.Second)
	rw := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:keep-write")
	other := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:keep-write")
	wctx, r1 := writeThenRead(t, ctx, rw, 0, 300*time.Millisecond) // the watchdog's 30 s write lease
	r2, err := rw.RLockWithLease(r1, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64(); pttl < (20 * time.Second).Milliseconds() {
		t.Errorf("lock PTTL %d ms after a nested read release in write mode; want the write lease kept (about 30 s)", pttl)
	}
	time.Sleep(600 * time.Millisecond) // past the read leases
	if err := context.Cause(wctx); err != nil {
		t.Fatalf("write hold ended: %v", err)
	}
	if w2, err := other.TryLock(ctx, 0); err == nil {
		_ = other.Unlock(w2)
		t.Fatal("another owner took the write lock while the first writer's hold was live")
	} else if !errors.Is(err, ErrNotAcquired) {
		t.Fatal(err)
	}
}

// After the drop to read mode the read holds left govern the lock's expiry:
// when their holder dies (Close: nothing is released, leases run out on the
// server), a writer gets the lock once the read lease is over, not at the end
// of the write lease the lock had (Redisson keeps that one).
func TestRWMutexDowngradeExpiresWithReads(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 20*time.Second)
	holder := newTestClient(t, node.Client(t), prefix)
	rw := mustRW(t, holder, "rw:downgrade")
	other := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:downgrade")
	wctx, _ := writeThenRead(t, ctx, rw, 0, 300*time.Millisecond) // the watchdog's 30 s write lease
	if err := rw.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64(); pttl <= 0 || pttl > 300 {
		t.Errorf("lock PTTL %d ms after the drop to read mode; want the read lease's (300 ms at most)", pttl)
	}
	holder.Close()
	time.Sleep(500 * time.Millisecond)
	w2, err := other.TryLock(ctx, 0)
	if err != nil {
		pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64()
		t.Fatalf("a writer is kept out 500 ms after its dead holder's read lease of 300 ms began: %v (lock PTTL %d ms)", err, pttl)
	}
	if err := other.Unlock(w2); err != nil {
		t.Fatal(err)
	}
}

// writeThenRead takes rw's write lock (lease 0: the watchdog's) and then a
// read hold with the same owner and readLease.
func writeThenRead(t *testing.T, ctx context.Context, rw *RWMutex, writeLease, readLease time.Duration) (wctx, rctx context.Context) {
	t.Helper()
	var err error
	if writeLease > 0 {
		wctx, err = rw.LockWithLease(ctx, writeLease)
	} else {
		wctx, err = rw.Lock(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rctx, err = rw.RLockWithLease(WithOwner(ctx, ownerIn(wctx)), readLease); err != nil {
		t.Fatal(err)
	}
	return wctx, rctx
}

// A writer with a short waiter timeout does not cut short another waiting
// writer's registration (which keeps new readers out).
func TestRWMutexPendingWriterExpiryNotShortened(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	long := mustRW(t, c1, "rw:pending", WithWaiterTimeout(6*time.Second))
	short := mustRW(t, c2, "rw:pending", WithWaiterTimeout(50*time.Millisecond))

	r1, err := long.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		w, err := long.TryLock(ctx, 5*time.Second)
		if err == nil {
			err = long.Unlock(w)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the long writer is registered
	if _, err := short.TryLock(ctx, 20*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("short writer: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // past the short writer's timeout, well within the long one's
	if r2, err := short.TryRLock(ctx, 0); err == nil {
		_ = short.RUnlock(r2)
		t.Errorf("a new reader entered while a writer (waiter timeout 6s) was waiting")
	}
	if err := long.RUnlock(r1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The write hold's watchdog renewal keeps the lock at least as long as the
// writer's own read hold, instead of cutting it back to the write lease.
func TestRWMutexWriteRenewalKeepsReads(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	// A 1.5 s watchdog lease renewed every 250 ms: a renewal a loaded
	// machine delays by a few hundred milliseconds does not lose the write.
	rw := mustRW(t, c, "rw:renew", WithWatchdog(1500*time.Millisecond, 250*time.Millisecond))
	wctx, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rctx, err := rw.RLockWithLease(WithOwner(ctx, ownerIn(wctx)), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the write is renewed at least twice
	raw := node.Client(t)
	left, err := raw.Do(ctx, raw.B().Pttl().Key(rw.key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if left < 8000 {
		t.Fatalf("lock expires in %d ms after the write's renewals, want the read hold's ~9.3 s", left)
	}
	if err := rw.RUnlock(rctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
}

// A nested read release that leaves the owner holding the lock on the server
// with no lease left deletes the lock: the outer read hold is then lost, not
// released, and its context says so.
func TestRWMutexReadReleaseLeavingNoLeaseIsLoss(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-nolease")
	// r1 must outlast the re-entry on a loaded machine, or r1's context
	// ends first and the re-entry is refused: scripts loaded, a 1 s lease.
	warm(t, rw.RLocker())
	r1, err := rw.RLockWithLease(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLockWithLease(r1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1300 * time.Millisecond) // r1's lease key has expired
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if locked, _ := rw.IsLocked(ctx); locked && r1.Err() != nil {
		t.Fatal("outer read context ended while the lock is still held")
	}
	if r1.Err() == nil {
		if locked, _ := rw.IsLocked(ctx); !locked {
			t.Fatal("outer read context still live after the lock was deleted")
		}
		return
	}
	if !errors.Is(context.Cause(r1), ErrLockLost) {
		t.Fatalf("outer read context: cause %v, want ErrLockLost (it was never released)", context.Cause(r1))
	}
	if err := rw.RUnlock(r1); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("RUnlock of the lost outer hold: %v, want ErrNotHeld", err)
	}
}

// A re-entry of an RWMutex hold with a shorter lease never shortens the lock
// on the server (the scripts only lengthen it, as Redisson's read and write
// locks do), so the hold must live on: its context neither ends early nor
// is its lock given back.
func TestRWMutexShorterReentryKeepsHold(t *testing.T) {
	t.Parallel()
	for _, write := range []bool{true, false} {
		name := map[bool]string{true: "write", false: "read"}[write]
		t.Run(name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			rw := mustRW(t, c, "short-reentry-"+name)
			ctx := testCtx(t, 20*time.Second)
			lock, lockWithLease := rw.Lock, rw.LockWithLease
			if !write {
				lock, lockWithLease = rw.RLock, rw.RLockWithLease
			}
			outer, err := lock(ctx) // the watchdog's 30 s lease
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lockWithLease(outer, 200*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := context.Cause(outer); err != nil {
				t.Fatalf("outer %s hold ended 1 s after a re-entry with a 200 ms lease: %v; the lock's expiry on the server is %d ms",
					name, err, pttlOf(t, node, rw.Key()))
			}
			if pttl := pttlOf(t, node, rw.Key()); pttl < 20000 {
				t.Fatalf("lock PTTL %d ms, want the watchdog's lease", pttl)
			}
		})
	}
}

func pttlOf(t testing.TB, n *redistest.Node, key string) int64 {
	t.Helper()
	v, err := n.Do(t, "PTTL", key).AsInt64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return v
}
