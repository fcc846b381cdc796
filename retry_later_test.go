package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// keyOfCase is the Redis key of a lock case's handle.
func keyOfCase(t testing.TB, l Locker) string {
	t.Helper()
	switch l := l.(type) {
	case *Mutex:
		return l.Key()
	case *FairMutex:
		return l.Key()
	case *LeanMutex:
		return l.Key()
	case *RWMutex:
		return l.Key()
	case readLocker:
		return l.rw.Key()
	}
	t.Fatalf("no key for %T", l)
	return ""
}

// lockAndUnlock is the body of a rival that locks l and unlocks it at once.
func lockAndUnlock(ctx context.Context, l Locker) func() error {
	return func() error {
		lctx, err := l.Lock(ctx)
		if err == nil {
			err = l.Unlock(lctx)
		}
		return err
	}
}

func isTryAgain(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && re.IsTryAgain()
}

// TestClusterSlotMigration moves a held lock's slot to another primary, as
// `redis-cli --cluster reshard` does, while its holder releases it and a
// rival waits. Until the slot is handed over, a script whose keys are not all
// on one side (and the lock scripts name keys that need not exist, such as
// the waiter set) gets TRYAGAIN: the release must call again until the
// migration is over rather than leave the lock to its lease, and the rival's
// Lock must go on waiting rather than fail.
func TestClusterSlotMigration(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			name := "migrating:" + lc.name
			holder := lc.make(t, c1, name)
			rival := lc.make(t, c2, name)
			if lc.name == "RWMutexRead" {
				rival = mustRW(t, c2, name) // readers share: the rival writes
			}
			// A grant and release first, so the slot holds the fencing
			// counter: keys on both sides once some have moved.
			warm, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := holder.Unlock(warm); err != nil {
				t.Fatal(err)
			}
			held, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mig := cl.StartMigration(t, keyOfCase(t, holder))

			// One attempt (no wait) reports at once what Redis said: held, or
			// TRYAGAIN when the attempt's keys are not all there.
			start := time.Now()
			if _, err := rival.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) && !isTryAgain(err) {
				t.Fatalf("a single attempt during the migration: %v, want ErrNotAcquired or TRYAGAIN", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("a single attempt took %v during the migration", d)
			}

			rivalDone := within(t, 5*time.Second, "the rival's Lock across the migration", lockAndUnlock(ctx, rival))
			time.Sleep(100 * time.Millisecond)
			released := within(t, 5*time.Second, "Unlock across the migration", func() error { return holder.Unlock(held) })

			time.Sleep(300 * time.Millisecond)
			// The fencing counter stays in the slot whatever the lock
			// scripts have done by now.
			if n := mig.MoveKeys(t); n == 0 && lc.fence {
				t.Fatal("no key of the lock's slot to move: the migration would test nothing")
			}
			time.Sleep(300 * time.Millisecond)
			mig.Finish(t)
			released()
			rivalDone()
			if dst := cl.NodeFor(t, keyOfCase(t, holder)); dst != mig.To {
				t.Fatalf("the slot is on %s after the migration, want %s", dst.Addr, mig.To.Addr)
			}
		})
	}
}

// TestClusterSlotMigrationSemaphores: as TestClusterSlotMigration for the
// counting primitives. Their releases and count-downs cannot be repeated
// after an attempt that may have run, but TRYAGAIN says nothing ran: they
// call again until the migration is over, and a waiter keeps waiting.
func TestClusterSlotMigrationSemaphores(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	type step func(ctx context.Context) error
	cases := []struct {
		name string
		// setup takes the only permit (or sets the count to 1); it returns
		// the key, the release or count-down, and the rival's wait.
		setup func(t *testing.T, ctx context.Context, name string) (key string, release, rival step)
	}{
		{"Semaphore", func(t *testing.T, ctx context.Context, name string) (string, step, step) {
			s1, err := c1.Semaphore(name)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := c2.Semaphore(name)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := s1.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits: %v %v", ok, err)
			}
			if err := s1.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			return s1.Key(), func(ctx context.Context) error { return s1.Release(ctx, 1) },
				func(ctx context.Context) error { return s2.Acquire(ctx, 1) }
		}},
		{"PermitSemaphore", func(t *testing.T, ctx context.Context, name string) (string, step, step) {
			s1, err := c1.PermitSemaphore(name)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := c2.PermitSemaphore(name)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := s1.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits: %v %v", ok, err)
			}
			id, err := s1.Acquire(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return s1.Key(), func(ctx context.Context) error { return s1.Release(ctx, id) },
				func(ctx context.Context) error { _, err := s2.Acquire(ctx, time.Minute); return err }
		}},
		{"CountDownLatch", func(t *testing.T, ctx context.Context, name string) (string, step, step) {
			l1, err := c1.CountDownLatch(name)
			if err != nil {
				t.Fatal(err)
			}
			l2, err := c2.CountDownLatch(name)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := l1.TrySetCount(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetCount: %v %v", ok, err)
			}
			return l1.Key(), l1.CountDown, l2.Await
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			key, release, rival := tc.setup(t, ctx, "migrating:"+tc.name)
			mig := cl.StartMigration(t, key)
			rivalDone := within(t, 5*time.Second, "the rival's wait across the migration", func() error { return rival(ctx) })
			time.Sleep(100 * time.Millisecond)
			released := within(t, 5*time.Second, "release across the migration", func() error { return release(ctx) })
			time.Sleep(300 * time.Millisecond)
			if n := mig.MoveKeys(t); n == 0 {
				t.Fatal("no key of the slot to move: the migration would test nothing")
			}
			time.Sleep(300 * time.Millisecond)
			mig.Finish(t)
			released()
			rivalDone()
		})
	}
}

// TestLoadingRetried: a server reading its data (here DEBUG RELOAD, slowed
// per key) answers LOADING and runs nothing. A Lock waits through it and a
// release calls again; a single attempt reports it at once.
func TestLoadingRetried(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if lc.name == "RWMutexRead" {
			continue // the write side's scripts, read with the rest of RWMutex
		}
		t.Run(lc.name, func(t *testing.T) {
			// A server of each case's own: a reload stops the whole server,
			// and a case that fails leaves it loading slowly, its keys kept.
			t.Parallel()
			node := redistest.Server(t, redistest.WithArgs("--enable-debug-command", "local",
				"--loading-process-events-interval-bytes", "1024"))
			rc := node.Client(t)
			// The release calls again until the server has loaded: on a
			// loaded machine that takes longer than the default release
			// timeout.
			c := newTestClient(t, rc, WithReleaseTimeout(20*time.Second))
			ctx := testCtx(t, 30*time.Second) // each case its own: one reload is seconds
			held, err := lc.make(t, c, "loading:held").Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			holder := lc.make(t, c, "loading:held")
			fresh := lc.make(t, c, "loading:fresh")
			// Filler keys: 2000 at 800 µs each keep the server loading for
			// over a second and a half.
			cmds := make(rueidis.Commands, 0, 2000)
			for i := range 2000 {
				cmds = append(cmds, rc.B().Set().Key(redistest.Prefix(t)+"filler:"+strconv.Itoa(i)).Value("x").Build())
			}
			for _, r := range rc.DoMulti(ctx, cmds...) {
				if err := r.Error(); err != nil {
					t.Fatal(err)
				}
			}
			if err := node.Do(t, "CONFIG", "SET", "key-load-delay", "800").Error(); err != nil {
				t.Fatal(err)
			}
			reloaded := within(t, 10*time.Second, "DEBUG RELOAD", func() error { return node.Do(t, "DEBUG", "RELOAD").Error() })
			for deadline := time.Now().Add(5 * time.Second); ; {
				err := rc.Do(ctx, rc.B().Ping().Build()).Error()
				if re, ok := rueidis.IsRedisErr(err); ok && re.IsLoading() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the server never answered LOADING (last: %v)", err)
				}
				time.Sleep(time.Millisecond)
			}
			var re *rueidis.RedisError
			if _, err := fresh.TryLock(ctx, 0); !errors.As(err, &re) || !re.IsLoading() {
				t.Fatalf("a single attempt while loading: %v, want LOADING", err)
			}
			released := within(t, 10*time.Second, "Unlock while the server loads", func() error { return holder.Unlock(held) })
			l, err := fresh.Lock(ctx)
			if err != nil {
				t.Fatalf("Lock while the server loads: %v", err)
			}
			released()
			reloaded()
			if err := node.Do(t, "CONFIG", "SET", "key-load-delay", "0").Error(); err != nil {
				t.Fatal(err)
			}
			if err := fresh.Unlock(l); err != nil {
				t.Fatal(err)
			}
			if n, err := rc.Do(ctx, rc.B().Exists().Key(holder.(interface{ Key() string }).Key()).Build()).AsInt64(); err != nil || n != 0 {
				t.Fatalf("the released lock's key: EXISTS %d, %v", n, err)
			}
		})
	}
}

// TestClusterDownRetried: with a primary gone (no replica to promote) the
// Cluster answers CLUSTERDOWN for every slot and runs nothing. A release and
// a Lock on a surviving primary call again until the Cluster is back; a
// single attempt reports it at once.
func TestClusterDownRetried(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	// The Cluster clears a primary's failure only two node timeouts (4 s
	// here) after it was marked: more than the default release timeout.
	c1 := newTestClient(t, cl.Client(t), prefix, WithReleaseTimeout(30*time.Second))
	c2 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 60*time.Second)
	holder, rival := mustMutex(t, c1, "down"), mustMutex(t, c2, "down")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owner := cl.NodeFor(t, holder.Key())
	var victim *redistest.Node
	for _, n := range cl.Nodes {
		if n != owner {
			victim = n
			break
		}
	}
	victim.Kill()
	for deadline := time.Now().Add(20 * time.Second); ; {
		info, _ := owner.Do(t, "CLUSTER", "INFO").ToString()
		if strings.Contains(info, "cluster_state:fail") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Cluster never went down after a primary was killed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var re *rueidis.RedisError
	if _, err := rival.TryLock(ctx, 0); !errors.As(err, &re) || !re.IsClusterDown() {
		t.Fatalf("a single attempt while the Cluster is down: %v, want CLUSTERDOWN", err)
	}
	rivalDone := within(t, 15*time.Second, "the rival's Lock across the Cluster's outage", lockAndUnlock(ctx, rival))
	released := within(t, 20*time.Second, "Unlock across the Cluster's outage", func() error { return holder.Unlock(held) })
	time.Sleep(300 * time.Millisecond)
	victim.Restart(t)
	released()
	rivalDone()
}

// TestBusyRetried: while the server runs someone's script past
// busy-reply-threshold it answers BUSY to everything else and runs nothing.
// A Lock and a release wait it out; a single attempt reports it at once.
//
// The Observer sees the calls made again (Retries) on the Unlock and the Lock,
// and none on calls the server answered at once.
func TestBusyRetried(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	rec := &recorder{}
	c := newTestClient(t, rc, WithObserver(rec))
	ctx := testCtx(t, 30*time.Second)
	if err := node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	// busy runs the slow script and returns once the server answers BUSY;
	// the returned function waits for the script's end.
	busy := func(t *testing.T) func() {
		script := slowScript(t, node, time.Second)
		awaitBusy(t, ctx, rc)
		return script
	}
	t.Run("Semaphore", func(t *testing.T) {
		s := mustSem(t, c, "busy:permits")
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		rec.take()
		script := busy(t)
		if err := s.Release(ctx, 1); err != nil {
			t.Fatalf("Release while the server is busy: %v", err)
		}
		script()
		if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("permits after the release: %d, %v; want 1", n, err)
		}
		if _, releases, _ := rec.take(); len(releases) != 1 || releases[0].e.Retries == 0 || releases[0].e.Err != nil {
			t.Errorf("releases: %+v, want one that succeeded with retries", releases)
		}
	})
	for _, lc := range lockCases[:3] { // Mutex, FairMutex, LeanMutex
		t.Run(lc.name, func(t *testing.T) {
			holder := lc.make(t, c, "busy")
			held, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if a, _, _ := rec.take(); len(a) != 1 || a[0].e.Retries != 0 {
				t.Fatalf("acquisitions before the script: %+v, want one with no retries", a)
			}
			fresh := lc.make(t, c, "busy:fresh")
			script := busy(t)
			if _, err := fresh.TryLock(ctx, 0); err == nil || !strings.Contains(err.Error(), "BUSY ") {
				t.Fatalf("a single attempt while the server is busy: %v, want BUSY", err)
			}
			released := within(t, 10*time.Second, "Unlock while the server is busy", func() error { return holder.Unlock(held) })
			l, err := fresh.Lock(ctx)
			if err != nil {
				t.Fatalf("Lock while the server is busy: %v", err)
			}
			released()
			script()
			if err := fresh.Unlock(l); err != nil {
				t.Fatal(err)
			}
			acquires, releases, _ := rec.take()
			if len(acquires) != 2 || acquires[0].e.Retries != 0 || acquires[0].e.Outcome != Failed || acquires[1].e.Retries == 0 {
				t.Errorf("acquisitions while busy: %+v, want a single attempt with no retries, then a Lock with some", acquires)
			}
			if len(releases) != 2 || releases[0].e.Retries == 0 || releases[1].e.Retries != 0 {
				t.Errorf("releases: %+v, want the one while busy with retries, the one after with none", releases)
			}
		})
	}
}

// TestClusterFailover: the primary holding a lock is killed and the Cluster
// promotes its replica. The failover guard had the grant reach the replica
// before Lock returned, so the lock survives: the holder's context stays
// live and its renewals go on against the new primary. A rival whose client
// has not yet seen the failover locks: its first call, to the dead primary's
// address, cannot be sent and is made again once the client has found the
// new primary; it waits while the holder holds, and gets the lock with a
// higher fencing token when the holder unlocks. So does a waiter from before
// the kill, whatever broke under it (TestLockAfterBrokenConnection makes a
// broken connection certain).
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	prefix := sharedPrefix(t)
	// Renewed every 2 s, a 20 s lease outlasts detection, election and the
	// Cluster's down state with room for a loaded machine.
	const lease, every = 20 * time.Second, 2 * time.Second
	c1 := newTestClient(t, cl.Client(t), prefix, WithWatchdog(lease, every), WithReleaseTimeout(20*time.Second))
	// The new primary has no replica left: until a guarded Client has
	// recounted replicas, its acquisitions there fail with ErrNotReplicated
	// (the guard's contract), so the rival runs without the guard.
	c2 := newTestClient(t, cl.Client(t), prefix, WithFailoverGuard(false, 0))
	c3 := newTestClient(t, cl.Client(t), prefix, WithFailoverGuard(false, 0))
	ctx := testCtx(t, 90*time.Second)
	holder, rival := mustMutex(t, c1, "failover"), mustMutex(t, c2, "failover")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := Fence(held)
	lockAfter := func(m *Mutex) chan error {
		done := make(chan error, 1)
		go func() {
			l, err := m.Lock(ctx)
			if err == nil {
				if next, _ := Fence(l); next <= token {
					err = fmt.Errorf("token %d after the failover, not above %d", next, token)
				}
				if uerr := m.Unlock(l); err == nil {
					err = uerr
				}
			}
			done <- err
		}()
		return done
	}
	// A waiter from before the kill: its connection to the primary breaks
	// under it, and once its attempt is settled by owner it waits on.
	earlyDone := lockAfter(mustMutex(t, c3, "failover"))
	time.Sleep(200 * time.Millisecond)
	old := cl.NodeFor(t, holder.Key())
	old.Kill()
	killed := time.Now()
	var promoted *redistest.Node
	for promoted == nil {
		if p := cl.NodeFor(t, holder.Key()); p != old {
			promoted = p
		} else if time.Since(killed) > 30*time.Second {
			t.Fatal("no replica promoted within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("replica %s promoted %v after the kill", promoted.Addr, time.Since(killed).Round(time.Millisecond))
	// The rival's client has not called since the kill: its first call goes
	// to the dead primary's address, cannot be sent, and is made again once
	// the client has found the new primary.
	rivalDone := lockAfter(rival)
	// A renewal on the new primary sets the lease back near 20 s; without
	// one it only falls.
	for renewed := false; !renewed; {
		pttl, err := promoted.Do(t, "PTTL", holder.Key()).AsInt64()
		switch {
		case err != nil:
			t.Fatalf("PTTL on the new primary: %v", err)
		case pttl < 0:
			t.Fatalf("the lock is gone from the new primary (PTTL %d): the grant did not reach the replica", pttl)
		case pttl > (lease-every/2).Milliseconds() && time.Since(killed) > every:
			renewed = true
		case time.Since(killed) > lease*3/4:
			t.Fatalf("no renewal on the new primary within %v of the kill (PTTL %d ms)", lease*3/4, pttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := held.Err(); err != nil {
		t.Fatalf("the holder's context ended across the failover: %v (%v)", err, context.Cause(held))
	}
	for what, done := range map[string]chan error{"the rival's": rivalDone, "the waiter's from before the kill": earlyDone} {
		select {
		case err := <-done:
			t.Fatalf("%s Lock returned while the lock was held: %v", what, err)
		default:
		}
	}
	if err := holder.Unlock(held); err != nil {
		t.Fatalf("Unlock after the failover: %v", err)
	}
	for what, done := range map[string]chan error{"the rival's": rivalDone, "the waiter's from before the kill": earlyDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s Lock across the failover: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s Lock did not get the lock within 10 s of the holder's Unlock", what)
		}
	}
}

// TestLockAfterBrokenConnection: a waiting Lock's attempt runs on the server
// and its connection breaks before the reply comes back (the node died or
// failed over under it). The outcome is unknown, so the attempt is settled
// by owner (whatever it granted is given back) and the wait goes on: Lock
// acquires, and no hold of the lost attempt is left behind.
func TestLockAfterBrokenConnection(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			ctx := testCtx(t, 30*time.Second)
			l := lc.make(t, p.c, "broken")
			key := p.key(t, "broken")
			direct := p.node.Client(t)
			warm(t, l)
			p.px.FreezeReplies()
			done := within(t, 10*time.Second, "Lock after its attempt's connection broke", func() error {
				lctx, err := l.Lock(ctx)
				if err != nil {
					return err
				}
				return l.Unlock(lctx)
			})
			if !eventually(5*time.Second, func() bool {
				n, err := direct.Do(ctx, direct.B().Exists().Key(key).Build()).AsInt64()
				return err == nil && n == 1
			}) {
				t.Fatal("the attempt never ran on the server")
			}
			p.px.DropAll()
			p.px.Thaw()
			done()
			if n, err := direct.Do(ctx, direct.B().Exists().Key(key).Build()).AsInt64(); err != nil || n != 0 {
				t.Fatalf("after Unlock the lock's key is still there (EXISTS %d, %v): the lost attempt's hold was left behind", n, err)
			}
		})
	}
}

// TestBrokenConnectionWaitBounded: when the server stays out of reach after
// a waiting TryLock's connection broke, settling the attempt is bounded by
// the wait: TryLock returns the error within its wait (plus slack), however
// long its context.
func TestBrokenConnectionWaitBounded(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases[:3] { // Mutex, FairMutex, LeanMutex
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			ctx := testCtx(t, 60*time.Second)
			l := lc.make(t, p.c, "unreachable")
			warm(t, l)
			p.px.FreezeReplies()
			const wait = 500 * time.Millisecond
			var start time.Time
			done := within(t, 10*time.Second, "TryLock whose connection broke", func() error {
				start = time.Now()
				if _, err := l.TryLock(ctx, wait); err == nil {
					return errors.New("acquired with the server out of reach")
				}
				return nil
			})
			if !eventually(5*time.Second, func() bool { return exists(t, p.node, p.key(t, "unreachable")) }) {
				t.Fatal("the attempt never ran on the server")
			}
			p.px.Freeze() // new connections get nowhere
			p.px.DropAll()
			done()
			if d := time.Since(start); d > wait+2*time.Second {
				t.Fatalf("TryLock(%v) returned after %v with the server out of reach", wait, d)
			}
			p.px.Thaw()
		})
	}
}

// TestRetryLaterBounded: a migration that never finishes keeps answering
// TRYAGAIN; the retries stay within each call's bounds. TryLock returns the
// reply once its wait ends, and Unlock once its release timeout ends.
func TestRetryLaterBounded(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	// The release timeout outlasts a cluster topology refresh that rueidis
	// may make a call wait for after the migration's redirections (about
	// 0.8 s), so the Unlock sees TRYAGAIN before its deadline.
	const releaseTimeout, wait, slack = 1500 * time.Millisecond, 300 * time.Millisecond, time.Second
	c := newTestClient(t, cl.Client(t), WithReleaseTimeout(releaseTimeout))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "stuck")
	held, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mig := cl.StartMigration(t, m.Key())
	mig.MoveKeys(t) // and never finished: every call on the slot names a key that is not there

	start := time.Now()
	_, err = mustMutex(t, c, "stuck").TryLock(ctx, wait)
	if d := time.Since(start); !isTryAgain(err) || d < wait || d > wait+slack {
		t.Fatalf("TryLock(%v) on a stuck migration: %v after %v, want TRYAGAIN after the wait", wait, err, d)
	}
	// A Lock whose context ends says so, and why it had not got the lock,
	// whether the deadline fell in a pause or cut an attempt short. (A plain
	// LeanMutex names one key, which Redis redirects during a migration: the
	// fenced one names two.)
	for _, l := range []Locker{mustMutex(t, c, "stuck"), mustLean(t, c, "stuck:lean", WithFencing())} {
		if l, ok := l.(*LeanMutex); ok {
			lm := cl.StartMigration(t, l.Key()) // the lean key's own slot, left open
			lm.MoveKeys(t)
		}
		lctx, cancel := context.WithTimeout(ctx, wait)
		start = time.Now()
		_, err = l.Lock(lctx)
		cancel()
		if d := time.Since(start); !isTryAgain(err) || !errors.Is(err, context.DeadlineExceeded) || d > wait+slack {
			t.Fatalf("%T.Lock with a %v deadline on a stuck migration: %v after %v, want the deadline and TRYAGAIN", l, wait, err, d)
		}
	}
	start = time.Now()
	err = m.Unlock(held)
	if d := time.Since(start); !isTryAgain(err) || !errors.Is(err, context.DeadlineExceeded) || d < releaseTimeout/2 || d > releaseTimeout+slack {
		t.Fatalf("Unlock on a stuck migration: %v after %v, want the deadline and TRYAGAIN after the release timeout %v", err, d, releaseTimeout)
	}
	mig.Finish(t)
}

// refusingCall is a call that Redis refuses twice with a real TRYAGAIN reply
// and that then, with midAttempt, blocks until ctx ends (an attempt the
// deadline cuts short) or, without, goes on being refused (the deadline
// falls in a pause).
func refusingCall(ctx context.Context, rc rueidis.Client, midAttempt bool) func() error {
	refusals := 0
	return func() error {
		if refusals < 2 || !midAttempt {
			refusals++
			return rc.Do(ctx, rc.B().Eval().Script("return redis.error_reply('TRYAGAIN slot moving')").Numkeys(0).Build()).Error()
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

// checkDeadlineAndRefusal fails the test unless err carries both the
// deadline and the refusal, the refusal once.
func checkDeadlineAndRefusal(t *testing.T, what string, err error) {
	t.Helper()
	if !isTryAgain(err) || !errors.Is(err, context.DeadlineExceeded) || strings.Count(err.Error(), "TRYAGAIN") != 1 {
		t.Errorf("%s: %v, want the deadline and TRYAGAIN (once)", what, err)
	}
}

// TestCallAgainDeadline: when the context ends a call being made again, the
// error says both (the deadline, and the refusal that kept the call from
// succeeding), so a caller can tell a stuck migration from a slow server,
// whether the end fell in a pause or cut an attempt short.
func TestCallAgainDeadline(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	for _, midAttempt := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		call := refusingCall(ctx, rc, midAttempt)
		_, err := callAgain(ctx, func() (int64, error) { return 0, call() })
		cancel()
		checkDeadlineAndRefusal(t, fmt.Sprintf("callAgain ended by its context (mid-attempt %v)", midAttempt), err)
	}
	// Without a refusal before it, the deadline alone is reported.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := callAgain(ctx, func() (int64, error) { <-ctx.Done(); return 0, ctx.Err() })
	if isTryAgain(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("callAgain cut short with no refusal: %v, want the deadline alone", err)
	}
}

// TestWaitDeadline is TestCallAgainDeadline for the wait loops: notified
// (waitOn) and polling (LeanMutex's waitPolling).
func TestWaitDeadline(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	for _, ws := range []waitSpec{{channel: "notified"}, {}} {
		for _, midAttempt := range []bool{true, false} {
			// Room on a loaded machine for the notified wait's subscription
			// and at least one refusal before the deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			call := refusingCall(ctx, rc, midAttempt)
			_, err := c.await(ctx, ws, -1, func(context.Context, int64, bool) (bool, tryAgain, error) { return false, tryAgain{}, call() })
			cancel()
			checkDeadlineAndRefusal(t, fmt.Sprintf("wait (channel %q) ended by its context (mid-attempt %v)", ws.channel, midAttempt), err)
		}
	}
}

// TestReadOnlyRetried: a node that a failover the Client has not seen yet
// turned into a replica (a demoted primary, before the Sentinel client or a
// DNS name moves on) answers READONLY and runs nothing: the acquisition
// scripts are refused before they run, and a replica writes nothing anyway.
// A Lock and a release call again until the node is a primary again (here:
// promoted back); a single attempt reports READONLY at once.
func TestReadOnlyRetried(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(false, 0))
	ctx := testCtx(t, 30*time.Second)
	holder := mustMutex(t, c, "readonly:held")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := mustMutex(t, c, "readonly:fresh")
	// Fail over to the replica, and the old primary replicates from it: its
	// Client still sends there.
	if err := replica.Do(t, "REPLICAOF", "NO", "ONE").Error(); err != nil {
		t.Fatal(err)
	}
	if err := primary.Do(t, "REPLICAOF", "127.0.0.1", strconv.Itoa(replica.Port)).Error(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, _ := primary.Do(t, "INFO", "replication").ToString()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old primary did not sync from the new one")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := fresh.TryLock(ctx, 0); err == nil || !strings.HasPrefix(err.Error(), "scriptlock") || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("a single attempt on a replica: %v, want READONLY", err)
	}
	locked := within(t, 10*time.Second, "Lock while the node is a replica", lockAndUnlock(ctx, fresh))
	released := within(t, 10*time.Second, "Unlock while the node is a replica", func() error { return holder.Unlock(held) })
	time.Sleep(300 * time.Millisecond)
	if err := primary.Do(t, "REPLICAOF", "NO", "ONE").Error(); err != nil {
		t.Fatal(err)
	}
	released()
	locked()
	if n := primary.Do(t, "EXISTS", holder.Key(), fresh.Key()); n.Error() != nil {
		t.Fatal(n.Error())
	} else if v, _ := n.AsInt64(); v != 0 {
		t.Fatalf("%d lock keys left after both were released", v)
	}
}

// TestNoReplicasRetried: a primary with too few good replicas for its
// min-replicas-to-write answers NOREPLICAS, and a replica whose link to its
// primary is down, with replica-serve-stale-data no, answers MASTERDOWN
// (here with replica-read-only no; with yes it answers READONLY first).
// Either refuses a script before it writes anything. A Lock and a release
// call again until the node takes writes again; a single attempt reports
// the refusal at once.
func TestNoReplicasRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		refuse, allow [][]string
	}{
		{"NOREPLICAS",
			[][]string{{"CONFIG", "SET", "min-replicas-to-write", "1"}},
			[][]string{{"CONFIG", "SET", "min-replicas-to-write", "0"}}},
		{"MASTERDOWN",
			// A primary that is not there: the link stays down.
			[][]string{{"CONFIG", "SET", "replica-serve-stale-data", "no", "replica-read-only", "no"}, {"REPLICAOF", "127.0.0.1", "1"}},
			[][]string{{"REPLICAOF", "NO", "ONE"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t), WithFailoverGuard(false, 0))
			ctx := testCtx(t, 30*time.Second)
			holder := mustMutex(t, c, "refused:held")
			held, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fresh := mustMutex(t, c, "refused:fresh")
			for _, args := range tc.refuse {
				if err := node.Do(t, args...).Error(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := fresh.TryLock(ctx, 0); err == nil || !strings.Contains(err.Error(), tc.name) {
				t.Fatalf("a single attempt: %v, want %s", err, tc.name)
			}
			locked := within(t, 10*time.Second, "Lock while the node refuses writes", lockAndUnlock(ctx, fresh))
			released := within(t, 10*time.Second, "Unlock while the node refuses writes", func() error { return holder.Unlock(held) })
			time.Sleep(300 * time.Millisecond)
			for _, args := range tc.allow {
				if err := node.Do(t, args...).Error(); err != nil {
					t.Fatal(err)
				}
			}
			released()
			locked()
			if n, err := node.Do(t, "EXISTS", holder.Key(), fresh.Key()).AsInt64(); err != nil || n != 0 {
				t.Fatalf("lock keys left after both were released: %d, %v", n, err)
			}
		})
	}
}
