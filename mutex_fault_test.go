package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexRedisRestart kills Redis (kill -9) and starts it again while one
// owner holds the lock and others wait. Waiters must return (error or lock)
// and never hang past their context; nothing leaks after Close.
func TestMutexRedisRestart(t *testing.T) {
	node := redistest.Server(t, redistest.WithAOF())
	before := goleak.IgnoreCurrent()
	rc := rawClient(t, node.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "restart")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok1, _ := Fence(lctx)
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Past the restart, and short: the holder keeps the lock, so
			// every waiter waits its deadline out (the test runs alone).
			wctx, cancel := context.WithTimeout(WithOwner(ctx, "w"+time.Now().String()), 3*time.Second)
			defer cancel()
			got, err := m.Lock(wctx)
			if err == nil {
				err = m.Unlock(got)
			}
			results <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	node.Kill()
	time.Sleep(200 * time.Millisecond)
	node.Restart(t)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("waiters hung after a Redis restart")
	}
	close(results)
	for err := range results {
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("waiter returned: %v", err)
		}
	}
	// AOF kept the lock and the watchdog kept renewing it across the restart.
	if lctx.Err() != nil {
		t.Fatalf("holder lost the lock across a restart with AOF: %v", context.Cause(lctx))
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock after restart: %v", err)
	}
	// AOF kept the fencing counter: the next token is still larger.
	m2 := mustMutex(t, c, "restart")
	l2, err := m2.TryLock(WithOwner(ctx, "after"), 5*time.Second)
	if err != nil {
		t.Fatalf("lock after restart: %v", err)
	}
	if tok2, _ := Fence(l2); tok2 <= tok1 {
		t.Fatalf("token after restart %d, want > %d", tok2, tok1)
	}
	_ = m2.Unlock(l2)
	c.Close()
	rc.Close()
	goleak.VerifyNone(t, before, redistest.IgnoreReaper())
}

// TestMutexReleaseLatch replays a release whose reply was lost: the second
// call with the same latch key answers the first outcome, not "not held". An
// unvouched last release and every release of one of several holds record
// their outcome in the latch; a vouched last release records nothing and its
// retry reads the missing owner as released, even after another owner took
// the lock in between.
func TestMutexReleaseLatch(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 5*time.Second)
	m := mustMutex(t, c, "latch")
	latch := redissonName("redisson_unlock_latch", m.key) + ":req-"
	release := func(lctx context.Context, req string, retry, vouched bool) (int64, bool) {
		t.Helper()
		field := c.id + ":" + ownerIn(lctx)
		n, held, err := generated.MutexRelease(ctx, rc, m.key, m.channel, latch+req, m.waiters, m.wake, m.fence, redissonName("redisson_lock_queue", m.key), redissonName("redisson_lock_timeout", m.key), time.Second, field, "publish", time.Minute, retry, vouched, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return n, held
	}
	lock := func(ctx context.Context) context.Context {
		t.Helper()
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return lctx
	}

	// Unvouched: the outcome is in the latch.
	lctx := lock(ctx)
	if n, held := release(lctx, "1", false, false); !held || n != 1 {
		t.Fatalf("release = %d, %v; want 1 (released)", n, held)
	}
	if !exists(t, node, latch+"1") {
		t.Fatal("an unvouched last release left no latch")
	}
	if n, held := release(lctx, "1", true, false); !held || n != 1 {
		t.Fatalf("retried release = %d, %v; want the first outcome (released)", n, held)
	}
	if _, held := release(lctx, "1x", true, false); held {
		t.Fatal("a new unvouched release of a lock not held: held, want not held")
	}

	// One of two holds: latched whether vouched or not, so a retry does not
	// give up a second hold.
	lctx = lock(ctx)
	again := lock(lctx)
	if n, held := release(again, "2", false, true); !held || n != 0 {
		t.Fatalf("releasing one of two holds = %d, %v; want 0 (still held)", n, held)
	}
	if n, held := release(again, "2", true, true); !held || n != 0 {
		t.Fatalf("retried release of one of two holds = %d, %v; want 0", n, held)
	}
	if holds, err := m.holdsOf(ctx, c.id+":"+ownerIn(lctx)); err != nil || holds != 1 {
		t.Fatalf("holds after a retried release of one of two = %d, %v; want 1", holds, err)
	}

	// Vouched last release: no latch; the retry answers released although
	// another owner holds the lock by then.
	if n, held := release(lctx, "3", false, true); !held || n != 1 {
		t.Fatalf("vouched release = %d, %v; want 1 (released)", n, held)
	}
	if exists(t, node, latch+"3") {
		t.Fatal("a vouched last release wrote a latch")
	}
	other := lock(ctx)
	if n, held := release(lctx, "3", true, true); !held || n != 1 {
		t.Fatalf("retried vouched release = %d, %v; want 1 (released)", n, held)
	}
	if st, err := m.State(other); err != nil || st.HoldCount != 1 {
		t.Fatalf("the next owner's holds after the retry = %d, %v; want 1 (untouched)", st.HoldCount, err)
	}
	if err := m.Unlock(other); err != nil {
		t.Fatal(err)
	}
}

// TestMutexUnlockLostReply: an Unlock whose release ran on the server but
// whose reply was lost retries and reports the release, not ErrNotHeld, even
// when another owner took the lock before the retry, and leaves no latch key
// behind.
func TestMutexUnlockLostReply(t *testing.T) {
	t.Parallel()
	p := newProxied(t, sharedPrefix(t))
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, p.c, "lost-reply")
	warm(t, m)
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	go func() { res <- m.Unlock(lctx) }()
	key := p.key(t, "lost-reply")
	if !eventually(5*time.Second, func() bool { return !exists(t, p.node, key) }) {
		p.px.Thaw()
		t.Fatal("the release did not reach the server")
	}
	// Another owner takes the lock before the retry.
	next := mustMutex(t, direct, "lost-reply")
	nctx, err := next.TryLock(ctx, 0)
	if err != nil {
		p.px.Thaw()
		t.Fatalf("the next owner: %v", err)
	}
	p.px.DropAll()
	p.px.Thaw()
	if err := <-res; err != nil {
		t.Fatalf("Unlock whose first reply was lost: %v, want nil", err)
	}
	if cause := context.Cause(lctx); !errors.Is(cause, context.Canceled) || errors.Is(cause, ErrLockLost) {
		t.Fatalf("lock context cause = %v, want context.Canceled", cause)
	}
	if keys, err := p.node.Do(t, "KEYS", "redisson_unlock_latch:*").AsStrSlice(); err != nil || len(keys) != 0 {
		t.Fatalf("latch keys = %v, %v; want none", keys, err)
	}
	if st, err := next.State(nctx); err != nil || st.HoldCount != 1 {
		t.Fatalf("the next owner's holds = %d, %v; want 1", st.HoldCount, err)
	}
	if err := next.Unlock(nctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutexFailoverGuard: with a replica connected, acquisitions wait for its
// acknowledgement; with the replica stopped, the acquisition is undone and
// fails with ErrNotReplicated, leaving no lock behind.
func TestMutexFailoverGuard(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "guarded")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with a healthy replica: %v", err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	_, err = m.Lock(ctx)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := m.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated acquisition left the lock held (%v, %v)", locked, err)
	}
	off := mustMutex(t, c, "guarded", WithFailoverGuard(false, 0))
	l2, err := off.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with the guard off: %v", err)
	}
	_ = off.Unlock(l2)

	// The fair and read-write locks are guarded the same way.
	fair := mustFair(t, c, "guarded-fair")
	if _, err := fair.Lock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("FairMutex.Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := fair.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated fair acquisition left the lock held (%v, %v)", locked, err)
	}
	rw := mustRW(t, c, "guarded-rw")
	if _, err := rw.Lock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("RWMutex.Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if _, err := rw.RLock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("RWMutex.RLock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := rw.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated read-write acquisition left the lock held (%v, %v)", locked, err)
	}
	replica.Resume()
	lf, err := fair.Lock(ctx)
	if err != nil {
		t.Fatalf("FairMutex.Lock with the replica back: %v", err)
	}
	_ = fair.Unlock(lf)
	lw, err := rw.Lock(ctx)
	if err != nil {
		t.Fatalf("RWMutex.Lock with the replica back: %v", err)
	}
	_ = rw.Unlock(lw)
}

// TestFailoverGuardCountUnknown: a replica count that could not be taken
// (the primary stalled when the first lock asked) is not a count of zero:
// the next acquisitions are still guarded.
func TestFailoverGuardCountUnknown(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	m := mustMutex(t, c, "guarded")
	// The client's connection is up (New dials it); the count is taken by
	// the first acquisition, here while the primary is stalled.
	primary.Pause()
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := m.Lock(short)
	cancel()
	primary.Resume()
	if err == nil {
		t.Fatal("Lock with the primary paused succeeded")
	}
	replica.Pause()
	defer replica.Resume()
	ctx := testCtx(t, 20*time.Second)
	if _, err := m.Lock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock with the replica stopped, after a count that failed: %v, want ErrNotReplicated", err)
	}
	if locked, err := m.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated acquisition left the lock held (%v, %v)", locked, err)
	}
}

func TestMutexCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	if !c1.sharded() {
		t.Fatal("cluster client should use sharded pub/sub")
	}
	for _, name := range []string{"order:1", "order:2", "user:{42}:wallet", "x"} {
		m1, m2 := mustMutex(t, c1, name), mustMutex(t, c2, name)
		l1, err := m1.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock: %v", name, err)
		}
		got := make(chan error, 1)
		go func() {
			l2, err := m2.Lock(ctx)
			if err == nil {
				err = m2.Unlock(l2)
			}
			got <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := m1.Unlock(l1); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: waiter: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: waiter not woken by the sharded release message", name)
		}
	}
}

// TestMutexUnlockUnvouchedLatched: a release the engine cannot vouch for (the
// hold is past its loss deadline here) records its outcome in a latch, so
// its retry stays exact; a release of a live hold records none.
func TestMutexUnlockUnvouchedLatched(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "unvouched")
	latches := func() int {
		t.Helper()
		keys, err := node.Do(t, "KEYS", "redisson_unlock_latch:*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	live, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(live); err != nil {
		t.Fatal(err)
	}
	if n := latches(); n != 0 {
		t.Fatalf("%d latch keys after releasing a live hold, want none", n)
	}
	late, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The server still holds the lock, but locally its loss deadline has
	// passed (as when renewals went unconfirmed): no longer vouched for.
	late.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Store(monoNanos(time.Now().Add(-time.Millisecond)))
	if err := m.Unlock(late); err != nil {
		t.Fatalf("Unlock of a hold the server still has: %v", err)
	}
	if n := latches(); n != 1 {
		t.Fatalf("%d latch keys after an unvouched release, want 1", n)
	}
}

// TestMutexReleaseSharedToken: a shared owner's release names its hold's
// fencing token. A token older than the counter belongs to an earlier hold
// of the same field, and changes nothing; the current token releases one
// hold at a time and then the lock; a counter that expired releases too.
func TestMutexReleaseSharedToken(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := WithOwner(testCtx(t, 5*time.Second), "shared")
	m := mustMutex(t, c, "shared-token")
	field := c.id + ":shared"
	latch := redissonName("redisson_unlock_latch", m.key) + ":req-"
	release := func(req string, token int64) (int64, bool) {
		t.Helper()
		n, held, err := generated.MutexRelease(ctx, rc, m.key, m.channel, latch+req, m.waiters, m.wake, m.fence, redissonName("redisson_lock_queue", m.key), redissonName("redisson_lock_timeout", m.key), time.Second, field, "publish", time.Minute, false, true, token, false)
		if err != nil {
			t.Fatal(err)
		}
		return n, held
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := Fence(lctx)
	if _, err := m.Lock(lctx); err != nil { // a second hold
		t.Fatal(err)
	}
	if _, held := release("1", token-1); held {
		t.Fatal("a release naming an older token: held, want not held")
	}
	if st, err := m.State(ctx); err != nil || st.HoldCount != 2 {
		t.Fatalf("after the stale release: %+v, %v; want 2 holds", st, err)
	}
	if n, held := release("2", token); !held || n != 0 {
		t.Fatalf("release of one of two holds = %d, %v; want 0 (still held)", n, held)
	}
	if err := rc.Do(ctx, rc.B().Del().Key(m.fence).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if n, held := release("3", token); !held || n != 1 {
		t.Fatalf("release with the counter expired = %d, %v; want 1 (released)", n, held)
	}
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Fatalf("after the last release: %+v, %v; want free", st, err)
	}
}
