package failover_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Failover tests on a real Sentinel deployment (a primary, two replicas,
// three sentinels) through rueidis's Sentinel client.

const (
	foWatchdogLease = 3 * time.Second
	foWatchdogEvery = time.Second
	foGuardTimeout  = 1500 * time.Millisecond // replicas behind proxies on a loaded machine
	// lossSlack is what a loaded 2-core machine may add to the contract's
	// bound (a holder whose lock is gone learns it within one lease).
	lossSlack = 3 * time.Second
)

// lockKinds are the exclusive primitives under test, each built on a
// scriptlock Client.
var lockKinds = []struct {
	name string
	make func(c *scriptlock.Client, name string) (scriptlock.Locker, error)
}{
	{"Mutex", func(c *scriptlock.Client, name string) (scriptlock.Locker, error) { return c.Mutex(name) }},
	{"FairMutex", func(c *scriptlock.Client, name string) (scriptlock.Locker, error) { return c.FairMutex(name) }},
	{"RWMutex", func(c *scriptlock.Client, name string) (scriptlock.Locker, error) { return c.RWMutex(name) }},
}

// mustLock builds a lock of kind k on c; an error fails the test.
func mustLock(t testing.TB, k func(*scriptlock.Client, string) (scriptlock.Locker, error), c *scriptlock.Client, name string) scriptlock.Locker {
	t.Helper()
	l, err := k(c, name)
	if err != nil {
		t.Fatalf("lock %q: %v", name, err)
	}
	return l
}

// sentinelLocks returns a scriptlock Client on its own Sentinel connection,
// as a separate service instance would have, with the given options.
func sentinelLocks(t *testing.T, s *redistest.SentinelT, prefix string, opts ...scriptlock.Option) *scriptlock.Client {
	t.Helper()
	c, _ := sentinelLocksRC(t, s, prefix, opts...)
	return c
}

// sentinelLocksRC is sentinelLocks that also returns the rueidis client under
// the locks, for tests that wait until it follows a failover.
func sentinelLocksRC(t *testing.T, s *redistest.SentinelT, prefix string, opts ...scriptlock.Option) (*scriptlock.Client, rueidis.Client) {
	t.Helper()
	rc := s.Client(t, func(o *rueidis.ClientOption) {
		o.Dialer.Timeout = time.Second
		o.ConnWriteTimeout = 2 * time.Second
	})
	c, err := scriptlock.New(rc, append([]scriptlock.Option{
		scriptlock.WithKeyPrefix(prefix),
		scriptlock.WithWatchdog(foWatchdogLease, foWatchdogEvery),
		scriptlock.WithReleaseTimeout(2 * time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, rc
}

func guardOpt(on bool) scriptlock.Option {
	if on {
		return scriptlock.WithFailoverGuard(true, foGuardTimeout)
	}
	return scriptlock.WithFailoverGuard(false, 0)
}

// awaitLoss waits for a lock context to end and reports how long that took,
// or fails the test when it has not ended within bound.
func awaitLoss(t *testing.T, lctx context.Context, bound time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-lctx.Done():
		if cause := context.Cause(lctx); !errors.Is(cause, scriptlock.ErrLockLost) {
			t.Errorf("%s: context ended with %v, want ErrLockLost", what, cause)
		}
		return time.Since(start)
	case <-time.After(bound):
		t.Errorf("%s: lock context still alive %v later", what, bound)
		return bound
	}
}

// acquireOn locks l until its lock key shows up on primary while held, for
// at most within, and unlocks.
func acquireOn(t *testing.T, primary *redistest.Node, l scriptlock.Locker, within time.Duration) error {
	key := l.(interface{ Key() string }).Key()
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(scriptlock.WithOwner(context.Background(), fmt.Sprintf("%016x", rand.Uint64())), 10*time.Second)
		lctx, err := l.Lock(ctx)
		if err == nil {
			n, derr := primary.Do(t, "EXISTS", key).AsInt64()
			uerr := l.Unlock(lctx)
			switch {
			case derr != nil:
				last = derr
			case n == 1:
				cancel()
				return nil
			default:
				last = fmt.Errorf("held, but not on the new primary %s (Unlock: %v)", primary.Addr, uerr)
			}
		} else {
			last = err
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no acquisition on the new primary within %v: %w", within, last)
}

// lockFollowing is TryLock retried while the client still dials the dead
// primary: rueidis moves to the new one when the sentinels announce it.
func lockFollowing(ctx context.Context, l scriptlock.Locker, wait time.Duration) (context.Context, error) {
	deadline := time.Now().Add(wait)
	for {
		lctx, err := l.TryLock(ctx, time.Until(deadline))
		if err == nil || errors.Is(err, scriptlock.ErrNotAcquired) || time.Now().After(deadline) {
			return lctx, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSentinelGuardWindow provokes the window the failover guard closes: an
// acquisition no replica saw, followed by the primary's death. Replication
// runs through proxies, which hold it back while a holder acquires; then the
// primary is killed and the held bytes discarded, so the promoted replica
// never saw the lock. (SIGSTOP of the replicas would not do: their sockets
// still receive the grant and they apply it on resuming.)
//
// Guard off: the new primary serves without the lock while its holder's
// context is alive, and a second owner acquires the same lock there with a
// fencing token not above the first's (only a fenced store keeps the two
// apart). The first holder's context then ends within a lease.
// Guard on: the acquisition fails with ErrNotReplicated and leaves nothing
// held, so the failover hands nobody a second grant.
func TestSentinelGuardWindow(t *testing.T) {
	t.Parallel()
	for _, kind := range lockKinds {
		t.Run(kind.name, func(t *testing.T) {
			// Each case has its own deployment, and most of its time is
			// spent waiting for sentinels: cases run side by side.
			t.Parallel()
			s := redistest.Sentinel(t, redistest.WithProxiedReplication())
			prefix := redistest.Prefix(t)
			// A lease long enough that the first holder's is certainly still
			// running when the second owner is granted the lock.
			const lease = 30 * time.Second
			wd := scriptlock.WithWatchdog(lease, time.Second)
			guardedClient := sentinelLocks(t, s, prefix, guardOpt(true), wd)
			firstClient := sentinelLocks(t, s, prefix, guardOpt(false), wd)
			// The refused guarded attempt uses a lock of its own, so that the
			// two cases cannot interfere.
			guarded := mustLock(t, kind.make, guardedClient, "guarded")
			healthy := mustLock(t, kind.make, guardedClient, "window")
			first := mustLock(t, kind.make, firstClient, "window")
			secondClient := sentinelLocks(t, s, prefix, guardOpt(false), wd)
			second := mustLock(t, kind.make, secondClient, "window")
			// The second owner's client first follows the failover on a lock of
			// its own: an acquisition whose reply is lost while it does would
			// stay held for its lease (a known limit), and must not be the
			// lock under test.
			probe := mustLock(t, kind.make, secondClient, "probe")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()

			// A healthy deployment: the guard passes and the lock works.
			l0, err := healthy.Lock(ctx)
			if err != nil {
				t.Fatalf("guarded Lock, replicas healthy: %v", err)
			}
			t0, _ := scriptlock.Fence(l0)
			if err := healthy.Unlock(l0); err != nil {
				t.Fatal(err)
			}
			// The release must reach both replicas before replication is held
			// back, or the promoted replica would still see this hold.
			wkey := healthy.(interface{ Key() string }).Key()
			for _, r := range s.Data[1:] {
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
					if n, err := r.Do(t, "EXISTS", wkey).AsInt64(); err == nil && n == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("replica %s still has %s 5 s after its release", r.Addr, wkey)
					}
				}
			}

			// Replication is held back in the proxies: neither the grant nor
			// a replica's acknowledgement gets through.
			for _, p := range s.ReplicationProxies {
				p.Freeze()
			}
			_, gerr := guarded.Lock(ctx)
			firstAt := time.Now()
			lctx, err := first.Lock(ctx)
			if err != nil {
				for _, p := range s.ReplicationProxies {
					p.Thaw()
				}
				t.Fatalf("unguarded Lock with replication held back: %v", err)
			}
			t1, _ := scriptlock.Fence(lctx)
			old := s.Data[0]
			start := time.Now()
			old.Kill()
			for _, p := range s.ReplicationProxies {
				p.DropAll() // discards what the proxy held: the replicas never see the grant
				p.Thaw()
			}
			primary, _ := s.WaitFailover(t, old, 1)
			took := time.Since(start)
			// The new primary serves without the lock while its holder still
			// believes it holds it.
			aliveAtFailover := lctx.Err() == nil
			t.Logf("kill -9 of %s: %s promoted in %v", old.Addr, primary.Addr, took)

			if !errors.Is(gerr, scriptlock.ErrNotReplicated) {
				t.Errorf("guarded Lock with replication held back: %v, want ErrNotReplicated", gerr)
			}

			// The promoted replica never saw the unguarded grant.
			start = time.Now()
			pctx, err := lockFollowing(ctx, probe, 2*lease)
			if err != nil {
				t.Fatalf("second owner's client does not reach the new primary: %v", err)
			}
			_ = probe.Unlock(pctx)
			lctx2, err := second.TryLock(ctx, 10*time.Second)
			if err != nil {
				keys, _ := primary.Do(t, "KEYS", "*"+prefix+"*").AsStrSlice()
				dumpKeys(t, primary, keys)
				t.Fatalf("second owner on the new primary (first holder's token %d, context alive %v; clients: guarded %s, first %s, second %s): %v",
					t1, lctx.Err() == nil, guardedClient.ID(), firstClient.ID(), secondClient.ID(), err)
			}
			t2, _ := scriptlock.Fence(lctx2)
			t.Logf("guard off: second owner acquired %v after the failover; first holder's context alive then: %v (at the failover: %v); tokens %d (before), %d (first), %d (second)",
				time.Since(start), lctx.Err() == nil, aliveAtFailover, t0, t1, t2)
			if secondAt := time.Now(); secondAt.After(firstAt.Add(lease)) {
				t.Errorf("second owner acquired %v after the first, past the first's lease %v: window not shown", secondAt.Sub(firstAt), lease)
			}
			if t2 > t1 {
				t.Errorf("second owner's token %d above the unreplicated first's %d: the new primary saw the first grant", t2, t1)
			}
			if t2 <= t0 {
				t.Errorf("second owner's token %d not above the replicated grant's %d", t2, t0)
			}
			// The first holder's lock did not survive; its context must end
			// within one watchdog lease (here at its next renewal).
			lost := awaitLoss(t, lctx, lease+lossSlack, "first holder after failover")
			t.Logf("first holder's context ended %v after the second owner acquired", lost)
			if err := first.Unlock(lctx); !errors.Is(err, scriptlock.ErrNotHeld) {
				t.Errorf("first holder's Unlock: %v, want ErrNotHeld", err)
			}
			if lctx2.Err() != nil {
				t.Errorf("second owner's hold ended: %v", context.Cause(lctx2))
			}
			// The guarded acquisition that failed with ErrNotReplicated is not
			// held on the new primary either.
			gkey := guarded.(interface{ Key() string }).Key()
			if n, err := primary.Do(t, "EXISTS", gkey).AsInt64(); err != nil || n != 0 {
				dumpKeys(t, primary, []string{gkey})
				t.Errorf("the acquisition refused with ErrNotReplicated is held on the new primary (EXISTS %s = %d, %v)", gkey, n, err)
			}
			if err := second.Unlock(lctx2); err != nil {
				t.Errorf("second owner's Unlock: %v", err)
			}
		})
	}
}

// fencedStore is a counter behind a fencing check, as a database row guarded
// by UPDATE ... WHERE fence < $token would be. Every write is an increment
// computed from a value read earlier; a write accepted on top of a value
// other than the one it read is a lost update.
type fencedStore struct {
	mu       sync.Mutex
	check    bool // refuse tokens not above the last accepted one
	value    int64
	last     int64
	tokens   []int64 // accepted, in order
	accepted int64
	refused  int64
	lost     int64
	times    []time.Time // accepted writes
}

func (s *fencedStore) read() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// write stores base+1 with token; it reports false when the token is refused.
func (s *fencedStore) write(token, base int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.check && token <= s.last {
		s.refused++
		return false
	}
	if base != s.value {
		s.lost++ // someone else's increment is overwritten
	}
	s.value = base + 1
	s.last = max(s.last, token)
	s.tokens = append(s.tokens, token)
	s.accepted++
	s.times = append(s.times, time.Now())
	return true
}

// holdStats are what the workers saw.
type holdStats struct {
	acquired        atomic.Int64
	lockErrors      atomic.Int64
	notReplicated   atomic.Int64
	ctxEndedInWork  atomic.Int64
	refusedLive     atomic.Int64 // fenced out while its context was alive
	unlockNotHeld   atomic.Int64
	unlockOtherErrs atomic.Int64
	lossTooLate     atomic.Int64 // lock gone but context alive past the bound
	lastErr         atomic.Value
}

// TestSentinelFailoverContended: contended workers (each its own Client and
// Sentinel connection) do fenced read-modify-write on a store that checks
// tokens while the deployment fails over, first by SENTINEL FAILOVER, then by
// kill -9 of the primary. Checked for each lock kind, guard on and off: no
// accepted write lost or applied twice, accepted tokens strictly increasing,
// a holder whose lock did not survive sees its context end within a lease,
// every worker acquires on the new primary, and no key is left at the end.
// The unavailability window (longest gap between accepted writes) is
// reported and bounded.
func TestSentinelFailoverContended(t *testing.T) {
	// Lock calls carry no owner: each gets a fresh one, as in an application
	// that shares one handle between goroutines.
	t.Parallel()
	for _, kind := range lockKinds {
		for _, guard := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/guard=%v", kind.name, guard), func(t *testing.T) {
				t.Parallel() // a deployment of its own, as in TestSentinelGuardWindow
				s := redistest.Sentinel(t)
				prefix := redistest.Prefix(t)
				const workers = 4
				lockers := make([]scriptlock.Locker, workers)
				for i := range lockers {
					lockers[i] = mustLock(t, kind.make, sentinelLocks(t, s, prefix, guardOpt(guard)), "counter")
				}
				store := &fencedStore{check: true}
				for _, fault := range []string{"SENTINEL FAILOVER", "kill -9"} {
					runFailoverPhase(t, s, store, lockers, fault)
				}
				checkStore(t, store)
				// Every hold was released or expired: nothing but the fence
				// counter remains on the final primary.
				p := s.Primary(t)
				checkNoKeys(t, p, prefix, foWatchdogLease+lossSlack)
			})
		}
	}
}

// checkNoKeys fails the test, describing each key, when keys under prefix
// other than the fencing counter are still on node after within.
func checkNoKeys(t *testing.T, node *redistest.Node, prefix string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		keys, err := node.Do(t, "KEYS", "*"+prefix+"*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, k := range keys {
			if isFenceKey(k) {
				continue
			}
			// A release latch lives as long as its Unlock could be retried
			// (up to the caller's deadline) and then expires on its own.
			if strings.HasPrefix(k, "redisson_unlock_latch:") {
				if ttl, err := node.Do(t, "PTTL", k).AsInt64(); err == nil && ttl > 0 && ttl <= latchMax.Milliseconds() {
					continue
				}
			}
			left = append(left, k)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			dumpKeys(t, node, left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// latchMax bounds how long a release latch may live here: the workers'
// lock contexts have a 20 s deadline, and FairMutex and RWMutex latches live
// a little past it; the latch of a release that undoes an acquisition (one
// no replica acknowledged, say) lives a minute, as the package doc says.
const latchMax = time.Minute

// dumpKeys fails the test with each key's type, TTL and content.
func dumpKeys(t *testing.T, node *redistest.Node, keys []string) {
	t.Helper()
	for _, k := range keys {
		typ, _ := node.Do(t, "TYPE", k).ToString()
		ttl, _ := node.Do(t, "PTTL", k).AsInt64()
		var content []string
		switch typ {
		case "zset":
			content, _ = node.Do(t, "ZRANGE", k, "0", "-1", "WITHSCORES").AsStrSlice()
		case "list":
			content, _ = node.Do(t, "LRANGE", k, "0", "-1").AsStrSlice()
		case "hash":
			m, _ := node.Do(t, "HGETALL", k).AsStrMap()
			for f, v := range m {
				content = append(content, f+"="+v)
			}
		}
		t.Errorf("key on %s: %s (%s, PTTL %d) %q", node.Addr, k, typ, ttl, content)
	}
}

// isFenceKey reports whether k is a fencing-token counter, which outlives
// holds by design (it expires when idle).
func isFenceKey(k string) bool { return strings.HasPrefix(k, "redisson_lock_token:") }

func checkStore(t *testing.T, store *fencedStore) {
	t.Helper()
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.lost != 0 {
		t.Errorf("%d accepted writes overwrote another's increment (lost updates)", store.lost)
	}
	if store.value != store.accepted {
		t.Errorf("counter %d after %d accepted increments", store.value, store.accepted)
	}
	for i := 1; i < len(store.tokens); i++ {
		if store.tokens[i] <= store.tokens[i-1] {
			t.Errorf("accepted token %d after %d", store.tokens[i], store.tokens[i-1])
			break
		}
	}
}

// runFailoverPhase runs the workers, injects fault after a second of
// contended work, and stops once every worker has acquired and written after
// the new primary was agreed on.
func runFailoverPhase(t *testing.T, s *redistest.SentinelT, store *fencedStore, lockers []scriptlock.Locker, fault string) {
	t.Helper()
	var (
		st         holdStats
		healed     atomic.Bool
		afterHeal  = make([]atomic.Int64, len(lockers))
		stop       = make(chan struct{})
		wg         sync.WaitGroup
		phaseStart = time.Now()
	)
	store.mu.Lock()
	firstWrite := len(store.times)
	store.mu.Unlock()
	for i, l := range lockers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if ok := failoverHold(l, store, &st); ok && healed.Load() {
					afterHeal[i].Add(1)
				}
			}
		})
	}
	time.Sleep(time.Second)
	var (
		old, primary *redistest.Node
		took         time.Duration
	)
	switch fault {
	case "SENTINEL FAILOVER":
		old, primary, took = s.Failover(t)
	default:
		old, primary, took = s.KillPrimary(t)
	}
	healed.Store(true)
	// How far the fencing counter went back: the promoted replica's value
	// against the last token the store accepted from the old primary.
	store.mu.Lock()
	lastAccepted := store.last
	store.mu.Unlock()
	fenceKey := "redisson_lock_token:{" + lockers[0].(interface{ Key() string }).Key() + "}"
	counter, cerr := primary.Do(t, "GET", fenceKey).ToString()
	t.Logf("%s: fencing counter on the new primary %s (%v), last token accepted before %d", fault, counter, cerr, lastAccepted)
	// Every worker must acquire and write on the new primary.
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := true
		for i := range afterHeal {
			if afterHeal[i].Load() == 0 {
				done = false
			}
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	stuck := false
	for i := range afterHeal {
		if afterHeal[i].Load() == 0 {
			t.Errorf("%s: worker %d never acquired and wrote after the failover within 30 s", fault, i)
			stuck = true
		}
	}
	if stuck {
		keys, _ := primary.Do(t, "KEYS", "*"+lockers[0].(interface{ Key() string }).Key()+"*").AsStrSlice()
		dumpKeys(t, primary, keys)
		return
	}
	// Each worker's next acquisition is on the new primary: its lock key is
	// there while it holds. (After SENTINEL FAILOVER the old primary stays
	// writable until the sentinels demote it, so a client that has not yet
	// followed still acquires there.)
	onNew := time.Now()
	for i, l := range lockers {
		if err := acquireOn(t, primary, l, 30*time.Second); err != nil {
			t.Errorf("%s: worker %d: %v", fault, i, err)
		}
	}
	t.Logf("%s: every worker acquired on the new primary %v after the sentinels agreed on it", fault, time.Since(onNew).Round(time.Millisecond))
	if fault == "kill -9" {
		old.Restart(t) // back as a replica, for the next phase or the end
	}

	store.mu.Lock()
	var gap time.Duration
	times := store.times[firstWrite:]
	for i := 1; i < len(times); i++ {
		gap = max(gap, times[i].Sub(times[i-1]))
	}
	accepted := len(times)
	store.mu.Unlock()
	if st.lossTooLate.Load() != 0 {
		t.Errorf("%s: %d holders whose lock did not survive kept a live context past one lease", fault, st.lossTooLate.Load())
	}
	// Bounded: sentinel detection (1 s down-after), election, the client's
	// switch, and a lease for locks that outlived their holder's connection.
	if bound := 2*time.Second + foWatchdogLease + 20*time.Second; gap > bound {
		t.Errorf("%s: writes stopped for %v, more than %v", fault, gap, bound)
	}
	t.Logf("%s: %s -> %s agreed in %v; longest gap between accepted writes %v; %d writes accepted in %v; "+
		"holds %d, lock errors %d (ErrNotReplicated %d), context ended during work %d, fenced out while alive %d, "+
		"Unlock ErrNotHeld %d, other Unlock errors %d; last error: %v",
		fault, old.Addr, primary.Addr, took, gap.Round(time.Millisecond), accepted, time.Since(phaseStart).Round(time.Millisecond),
		st.acquired.Load(), st.lockErrors.Load(), st.notReplicated.Load(), st.ctxEndedInWork.Load(), st.refusedLive.Load(),
		st.unlockNotHeld.Load(), st.unlockOtherErrs.Load(), st.lastErr.Load())
}

// failoverHold is one worker iteration: lock, read, work, fenced write,
// unlock. It reports whether a write was accepted.
func failoverHold(l scriptlock.Locker, store *fencedStore, st *holdStats) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lctx, err := l.Lock(ctx)
	if err != nil {
		st.lockErrors.Add(1)
		if errors.Is(err, scriptlock.ErrNotReplicated) {
			st.notReplicated.Add(1)
		}
		st.lastErr.Store(err.Error())
		time.Sleep(20 * time.Millisecond)
		return false
	}
	st.acquired.Add(1)
	token, _ := scriptlock.Fence(lctx)
	base := store.read()
	time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
	wrote := false
	if lctx.Err() != nil {
		st.ctxEndedInWork.Add(1)
	} else if wrote = store.write(token, base); !wrote {
		st.refusedLive.Add(1)
	}
	err = l.Unlock(lctx)
	switch {
	case err == nil:
	case errors.Is(err, scriptlock.ErrNotHeld):
		// The lock did not survive: its context must end within a lease of
		// the loss (it may already have).
		st.unlockNotHeld.Add(1)
		select {
		case <-lctx.Done():
		case <-time.After(foWatchdogLease + lossSlack):
			st.lossTooLate.Add(1)
		}
	default:
		st.unlockOtherErrs.Add(1)
		st.lastErr.Store(err.Error())
	}
	return wrote
}

// leased is a lock kind that takes a lease of its own.
type leased interface {
	scriptlock.Locker
	LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error)
}

// kindWaiter is a waiter for what a holder of one kind holds.
type kindWaiter struct {
	name    string
	wait    func(ctx context.Context) error // takes what the holder holds, and gives it back
	release func() error                    // the holder gives back
}

// holdEveryKind has a holder on hc take a Mutex, FairMutex, RWMutex,
// LeanMutex (for lease), Semaphore permit and PermitSemaphore permit (for
// lease) and returns, for each, a waiter for it on wc and the holder's
// release.
func holdEveryKind(t *testing.T, ctx context.Context, hc, wc *scriptlock.Client, lease time.Duration) []kindWaiter {
	t.Helper()
	must := func(l leased, err error) leased {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	var waiters []kindWaiter
	for _, k := range []struct {
		name string
		make func(c *scriptlock.Client) (leased, error)
	}{
		{"Mutex", func(c *scriptlock.Client) (leased, error) { return c.Mutex("m") }},
		{"FairMutex", func(c *scriptlock.Client) (leased, error) { return c.FairMutex("f") }},
		{"RWMutex", func(c *scriptlock.Client) (leased, error) { return c.RWMutex("rw") }},
		{"LeanMutex", func(c *scriptlock.Client) (leased, error) { return c.LeanMutex("lean") }},
	} {
		h, w := must(k.make(hc)), must(k.make(wc))
		hctx, err := h.LockWithLease(ctx, lease)
		if err != nil {
			t.Fatalf("%s: holder: %v", k.name, err)
		}
		waiters = append(waiters, kindWaiter{k.name,
			func(ctx context.Context) error {
				lctx, err := w.Lock(ctx)
				if err != nil {
					return err
				}
				return w.Unlock(lctx)
			},
			func() error { return h.Unlock(hctx) }})
	}
	hs, err := hc.Semaphore("sem")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := wc.Semaphore("sem")
	if _, err := hs.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := hs.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waiters = append(waiters, kindWaiter{"Semaphore",
		func(ctx context.Context) error {
			if err := ws.Acquire(ctx, 1); err != nil {
				return err
			}
			return ws.Release(ctx, 1)
		},
		func() error { return hs.Release(ctx, 1) }})
	hp, err := hc.PermitSemaphore("permits")
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := wc.PermitSemaphore("permits")
	if _, err := hp.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := hp.Acquire(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	waiters = append(waiters, kindWaiter{"PermitSemaphore",
		func(ctx context.Context) error {
			id, err := wp.Acquire(ctx, lease)
			if err != nil {
				return err
			}
			return wp.Release(ctx, id)
		},
		func() error { return hp.Release(ctx, id) }})
	return waiters
}
