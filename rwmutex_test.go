package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestRWMutexReadersShareWritersExclude(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	rw1, rw2 := mustRW(t, c1, "rw:basic"), mustRW(t, c2, "rw:basic")

	r1, err := rw1.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw2.TryRLock(ctx, 0)
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	r1b, err := rw1.RLock(r1) // reentrant read
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rw1.State(r1); err != nil || st.Mode != "read" || st.Reads != 2 || st.Lease <= 0 {
		t.Fatalf("State = %+v, %v", st, err)
	}
	if _, err := rw2.TryLock(WithOwner(ctx, "writer"), 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("writer while read-locked: %v", err)
	}
	if _, err := rw1.Lock(r1); !errors.Is(err, ErrUpgrade) {
		t.Fatalf("read holder asking to write: %v, want ErrUpgrade", err)
	}
	if err := rw1.Unlock(r1); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("write Unlock by a reader: %v", err)
	}
	for _, u := range []struct {
		rw  *RWMutex
		ctx context.Context
	}{{rw1, r1b}, {rw1, r1}, {rw2, r2}} {
		if err := u.rw.RUnlock(u.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if context.Cause(r1) != context.Canceled || r2.Err() == nil {
		t.Fatal("read contexts not ended by RUnlock")
	}
	if locked, _ := rw1.IsLocked(ctx); locked {
		t.Fatal("still locked")
	}
	if err := rw1.RUnlock(r1); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("extra RUnlock: %v", err)
	}

	// Writer: reentrant, excludes readers, may read itself, downgrades.
	w, err := rw1.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := Fence(w)
	if !ok || tok <= 0 {
		t.Fatalf("write Fence = %d, %v", tok, ok)
	}
	w2, err := rw1.Lock(w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw2.TryRLock(ctx, 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("reader while write-locked: %v", err)
	}
	// The read hold outlives the write hold: take it on a context that is
	// not the write lock's (which Unlock ends), with the same owner.
	owner, _ := OwnerFrom(w)
	wr, err := rw1.RLock(WithOwner(ctx, owner))
	if err != nil {
		t.Fatalf("writer taking a read lock: %v", err)
	}
	if st, _ := rw1.State(w); st.Mode != "write" || st.Writes != 2 || st.Reads != 1 {
		t.Fatalf("State = %+v", st)
	}
	if err := rw1.Unlock(w2); err != nil {
		t.Fatal(err)
	}
	if err := rw1.Unlock(w); err != nil {
		t.Fatal(err)
	}
	if st, _ := rw1.State(wr); st.Mode != "read" || st.Reads != 1 {
		t.Fatalf("after the writes: State = %+v, want read mode", st)
	}
	r3, err := rw2.TryRLock(ctx, 2*time.Second)
	if err != nil {
		t.Fatalf("reader after downgrade: %v", err)
	}
	if wr.Err() != nil {
		t.Fatal("downgraded read hold lost")
	}
	_ = rw1.RUnlock(wr)
	_ = rw2.RUnlock(r3)
	w3, err := rw2.TryLock(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tok3, _ := Fence(w3); tok3 <= tok {
		t.Fatalf("token %d not above %d", tok3, tok)
	}
	if err := rw2.Unlock(w3); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{rw1.Key(), rw1.writers} {
		if n, _ := node.Do(t, "EXISTS", k).AsInt64(); n != 0 {
			t.Fatalf("%s left behind", k)
		}
	}
	if keys, _ := node.Do(t, "KEYS", "*rwlock_timeout*").AsStrSlice(); len(keys) != 0 {
		t.Fatalf("lease keys left behind: %v", keys)
	}
}

func TestRWMutexBadInput(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	if _, err := c.RWMutex(""); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("empty name: %v", err)
	}
	rw := mustRW(t, c, "x")
	if _, err := rw.TryRLock(ctx, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if _, err := rw.RLockWithLease(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := rw.RUnlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatal(err)
	}
	if err := rw.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatal(err)
	}
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("bad input wrote %d keys", n)
	}
}

// TestRWMutexExclusion: readers and writers on three Clients; a writer is
// always alone, readers overlap.
func TestRWMutexExclusion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	var readers, writers, maxReaders atomic.Int32
	var violations atomic.Int32
	var wg sync.WaitGroup
	for ci := 0; ci < 3; ci++ {
		c := newTestClient(t, node.Client(t), prefix)
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rw := mustRW(t, c, "rw:stress")
				for r := 0; r < 8; r++ {
					if g%3 == 0 {
						l, err := rw.Lock(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if writers.Add(1) != 1 || readers.Load() != 0 {
							violations.Add(1)
						}
						time.Sleep(time.Millisecond)
						writers.Add(-1)
						if err := rw.Unlock(l); err != nil {
							t.Error(err)
							return
						}
						continue
					}
					l, err := rw.RLock(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					n := readers.Add(1)
					if writers.Load() != 0 {
						violations.Add(1)
					}
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					time.Sleep(2 * time.Millisecond)
					readers.Add(-1)
					if err := rw.RUnlock(l); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d exclusion violations", v)
	}
	if maxReaders.Load() < 2 {
		t.Fatalf("readers never overlapped (max %d)", maxReaders.Load())
	}
	t.Logf("up to %d readers at once", maxReaders.Load())
}

// TestRWMutexWriterNotStarved: readers on two Clients keep the lock
// continuously read-held (16 readers re-read as soon as they leave, staggered
// so their holds overlap and the lock is never free). A writer still gets in
// quickly: once it waits, new readers wait. Without the pending-writer rule
// the writer would only get in at a moment when no reader holds the lock.
func TestRWMutexWriterNotStarved(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	for ci := 0; ci < 2; ci++ {
		c := newTestClient(t, node.Client(t), prefix)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rw := mustRW(t, c, "rw:starve")
				time.Sleep(time.Duration(g) * 3 * time.Millisecond) // stagger: holds overlap
				for {
					select {
					case <-stop:
						return
					default:
					}
					l, err := rw.RLock(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					reads.Add(1)
					time.Sleep(25 * time.Millisecond)
					_ = rw.RUnlock(l)
				}
			}()
		}
	}
	time.Sleep(300 * time.Millisecond) // the read stream is flowing
	wc := newTestClient(t, node.Client(t), prefix)
	rw := mustRW(t, wc, "rw:starve")
	for i := 0; i < 5; i++ {
		before := reads.Load()
		start := time.Now()
		l, err := rw.TryLock(ctx, 500*time.Millisecond) // readers hold 25 ms each
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("writer starved by %d reads: %v", reads.Load()-before, err)
		}
		t.Logf("writer %d got in after %s", i, time.Since(start).Round(time.Millisecond))
		time.Sleep(5 * time.Millisecond)
		_ = rw.Unlock(l)
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if reads.Load() < 50 {
		t.Fatalf("only %d reads: readers were not running", reads.Load())
	}
}

// TestRWMutexDeadWriterReleasesReaders: a waiting writer whose connection
// freezes holds new readers back for at most the waiter timeout (plus the
// reader's fallback between calls, and a margin).
func TestRWMutexDeadWriterReleasesReaders(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	proxy := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	const waiterTimeout = 600 * time.Millisecond
	opts := []Option{prefix, WithWaiterTimeout(waiterTimeout)}
	rc := newTestClient(t, node.Client(t), opts...)
	wcl := newTestClient(t, rawClient(t, proxy.Addr), opts...)
	ctx := testCtx(t, 20*time.Second)
	reader := mustRW(t, rc, "rw:dead")
	r1, err := reader.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if l, err := mustRW(t, wcl, "rw:dead").Lock(wctx); err == nil {
			_ = mustRW(t, wcl, "rw:dead").Unlock(l)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := node.Do(t, "ZCARD", reader.writers).AsInt64(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writer never registered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	proxy.Freeze()
	if _, err := reader.TryRLock(WithOwner(ctx, "new"), 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("new reader with a live waiting writer: %v", err)
	}
	start := time.Now()
	r2, err := reader.TryRLock(WithOwner(ctx, "new"), 3*time.Second)
	if err != nil {
		t.Fatalf("reader still blocked by a dead writer: %v", err)
	}
	if took, bound := time.Since(start), waiterTimeout+waiterTimeout/3+700*time.Millisecond; took > bound {
		t.Errorf("dead writer held readers back for %s; bound %s (waiter timeout %s)", took.Round(time.Millisecond), bound, waiterTimeout)
	}
	_ = reader.RUnlock(r2)
	_ = reader.RUnlock(r1)
	wcancel()
	proxy.Thaw()
	<-done
}

func TestRWMutexWatchdogAndLoss(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 200*time.Millisecond))
	ctx := testCtx(t, 10*time.Second)
	rw := mustRW(t, c, "rw:wd")
	r, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLock(r)
	if err != nil {
		t.Fatal(err)
	}
	w, err := mustRW(t, c, "rw:wd2").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1800 * time.Millisecond) // three leases
	if r.Err() != nil || w.Err() != nil {
		t.Fatalf("hold lost while renewed: %v / %v", context.Cause(r), context.Cause(w))
	}
	if st, _ := rw.State(r); st.Reads != 2 {
		t.Fatalf("reads after 3 leases = %d", st.Reads)
	}
	if keys, _ := node.Do(t, "KEYS", "*rw:wd*rwlock_timeout*").AsStrSlice(); len(keys) != 2 {
		t.Fatalf("lease keys %v, want 2", keys)
	}
	// Deleted behind the Client's back: the watchdog finds it (ForceUnlock
	// through c would end the holds itself).
	if n, err := node.Do(t, "DEL", rw.Key()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("DEL = %d, %v", n, err)
	}
	select {
	case <-r2.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("read context not cancelled after the lock was deleted")
	}
	if !errors.Is(context.Cause(r), ErrLockLost) {
		t.Fatalf("cause = %v", context.Cause(r))
	}
	if err := mustRW(t, c, "rw:wd2").Unlock(w); err != nil {
		t.Fatal(err)
	}
}

func TestRWMutexCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	for i, name := range []string{"doc:1", "doc:2", "user:{42}:profile", "x"} {
		rw1, rw2 := mustRW(t, c1, name), mustRW(t, c2, name)
		w, err := rw1.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make(chan error, 2)
		for j := 0; j < 2; j++ {
			go func() {
				l, err := rw2.RLock(WithOwner(ctx, "r"+strconv.Itoa(i*2+j)))
				if err == nil {
					err = rw2.RUnlock(l)
				}
				got <- err
			}()
		}
		time.Sleep(100 * time.Millisecond)
		if err := rw1.Unlock(w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for j := 0; j < 2; j++ {
			select {
			case err := <-got:
				if err != nil {
					t.Fatalf("%s: reader: %v", name, err)
				}
			case <-time.After(1500 * time.Millisecond):
				t.Fatalf("%s: readers not woken by the sharded unlock message", name)
			}
		}
	}
}

// A shared owner's new read hold marks its first lease key; a release naming
// another mark (a late release of an earlier hold) changes nothing, renewals
// and extensions keep the mark, and a key made again after it expired (1)
// checks nothing.
func TestRWReadReleaseSharedMark(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := WithOwner(testCtx(t, 5*time.Second), "shared")
	rw := mustRW(t, c, "shared-mark")
	field := c.id + ":shared"
	timeouts := rwTimeouts(rw.key, field)
	latch := redissonName("redisson_unlock_latch", rw.key) + ":req-"
	release := func(req string, mark int64) int64 {
		t.Helper()
		res, err := generated.RwReadRelease(ctx, rc, rw.key, rw.channel, timeouts, rw.prefix, latch+req, field, "publish", time.Minute, mark, 0)
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	first := func() string {
		t.Helper()
		v, err := node.Do(t, "GET", timeouts+":1").ToString()
		if err != nil {
			t.Fatalf("GET %s:1: %v", timeouts, err)
		}
		return v
	}
	lctx, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Fence(lctx); ok {
		t.Fatal("a read hold handed out a fencing token")
	}
	mark, err := strconv.ParseInt(first(), 10, 64)
	if err != nil || mark < 2 {
		t.Fatalf("the first lease key holds %q; want the hold's mark, a number above 1", first())
	}
	if _, err := rw.RLock(lctx); err != nil { // a second hold: its key is not marked
		t.Fatal(err)
	}
	if v, _ := node.Do(t, "GET", timeouts+":2").ToString(); v != "1" {
		t.Fatalf("the second lease key holds %q, want 1", v)
	}
	if ok, err := generated.RwReadRenew(ctx, rc, rw.key, timeouts, time.Minute, field, 0); err != nil || !ok {
		t.Fatalf("RwReadRenew = %v, %v", ok, err)
	}
	if ok, err := generated.RwReadExtend(ctx, rc, rw.key, timeouts, rw.prefix, rw.channel, 2*time.Minute, field, 0, "publish", false); err != nil || !ok {
		t.Fatalf("RwReadExtend = %v, %v", ok, err)
	}
	if v := first(); v != strconv.FormatInt(mark, 10) {
		t.Fatalf("after renewal and extension the first lease key holds %q, want the mark %d", v, mark)
	}
	if pttl, _ := node.Do(t, "PTTL", timeouts+":1").AsInt64(); pttl <= time.Minute.Milliseconds() {
		t.Fatalf("PTTL of the first lease key = %d after extending to 2 minutes", pttl)
	}
	if st := release("1", mark+1); st != 0 {
		t.Fatalf("a release naming another mark: status %d, want 0 (not held)", st)
	}
	if st, err := rw.State(ctx); err != nil || st.Reads != 2 {
		t.Fatalf("after the stale release: %+v, %v; want 2 read holds", st, err)
	}
	if st := release("2", mark); st != 1 {
		t.Fatalf("release of one of two holds: status %d, want 1 (still reads)", st)
	}
	node.Do(t, "SET", timeouts+":1", "1", "PX", "60000") // made again after it expired
	if st := release("3", mark+1); st != 2 {
		t.Fatalf("release with an unmarked first key: status %d, want 2 (released)", st)
	}
	if st, err := rw.State(ctx); err != nil || st.Mode != "" {
		t.Fatalf("after the last release: %+v, %v; want free", st, err)
	}
}

// An owner id ending in ":write" is refused by every RWMutex call: its
// reader field would be the writer field of the owner without that ending,
// so its RUnlock released that owner's write lock (and State and RExtend
// read or extended it).
func TestRWMutexOwnerEndingInWrite(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	rw := mustRW(t, c, "owner-suffix")
	wctx, err := rw.Lock(WithOwner(ctx, "x"))
	if err != nil {
		t.Fatal(err)
	}
	odd := WithOwner(ctx, "x:write")
	if err := rw.RUnlock(odd); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RUnlock as owner x:write: %v, want ErrInvalidArgument", err)
	}
	if _, err := rw.TryRLock(odd, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryRLock as owner x:write: %v, want ErrInvalidArgument", err)
	}
	if _, err := rw.State(odd); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("State as owner x:write: %v, want ErrInvalidArgument", err)
	}
	if err := rw.RExtend(ctx, odd, time.Minute); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RExtend as owner x:write: %v, want ErrInvalidArgument", err)
	}
	if err := context.Cause(wctx); err != nil {
		t.Fatalf("owner x's write hold ended: %v", err)
	}
	if st, err := rw.State(wctx); err != nil || st.Mode != "write" || st.Writes != 1 {
		t.Fatalf("State of owner x = %+v, %v; want its write hold", st, err)
	}
	if err := rw.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
}

// A waiting writer that gives up wakes the readers it held back when the only
// registration left is a dead writer's whose deadline has passed: that one no
// longer holds readers back, but it was still counted, nothing was published
// and the readers slept to their next call (a third of the waiter timeout).
func TestRWMutexWithdrawBesideExpiredWriter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const waiterTimeout = 3 * time.Second
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(waiterTimeout))
	ctx := testCtx(t, 20*time.Second)
	rw := mustRW(t, c, "rw:withdraw")
	r1, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	wdone := make(chan error, 1)
	go func() { _, err := rw.Lock(wctx); wdone <- err }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened", what)
			}
		}
	}
	waitFor("writer registration", func() bool { n, _ := node.Do(t, "ZCARD", rw.writers).AsInt64(); return n == 1 })
	rdone := make(chan error, 1)
	go func() {
		r2, err := rw.TryRLock(WithOwner(ctx, "late"), 5*time.Second)
		if err == nil {
			err = rw.RUnlock(r2)
		}
		rdone <- err
	}()
	// The reader has been refused and sleeps; a writer that died since
	// registered before it and its deadline has passed.
	time.Sleep(200 * time.Millisecond)
	node.Do(t, "ZADD", rw.writers, "1", "dead:write")
	wcancel()
	if err := <-wdone; err == nil {
		t.Fatal("the writer got the lock under a reader")
	}
	start := time.Now()
	if err := <-rdone; err != nil {
		t.Fatalf("reader: %v", err)
	}
	if took := time.Since(start); took > waiterTimeout/6 {
		t.Errorf("reader entered %s after the last live writer withdrew; want it woken at once", took.Round(time.Millisecond))
	}
	_ = rw.RUnlock(r1)
}
