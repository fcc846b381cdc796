package scriptlock

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// clientEntries counts the per-lock entries of c's state maps, and of the
// process-wide registries of MultiLock and RedLock holds.
func clientEntries(c *Client) map[string]int {
	n := map[string]int{}
	c.mu.Lock()
	n["holds"] = len(c.holds)
	n["acquiring"] = len(c.acquiring)
	n["excluding"] = len(c.excluding)
	n["undoWatch"] = len(c.undoWatch)
	// An undo's latch whose release found no hold is kept for the owner's
	// next undo for half its life (undoLatchLocked): only older ones count.
	now := monoNanos(time.Now())
	for _, l := range c.undoLatches {
		if now-l.at >= int64(undoLatchTTL)/2 {
			n["undoLatches"]++
		}
	}
	n["marking"] = len(c.marking)
	n["waiting"] = len(c.waiting)
	n["extending"] = len(c.extending)
	n["unsent"] = len(c.unsent)
	n["unsentOrder"] = len(c.unsentOrder)
	n["forcing"] = len(c.forcing)
	c.mu.Unlock()
	c.givingBackMu.Lock()
	n["givingBack"] = len(c.givingBack)
	c.givingBackMu.Unlock()
	c.subs.mu.Lock()
	n["subs.chans"] = len(c.subs.chans)
	n["subs.handoffs"] = len(c.subs.handoffs)
	c.subs.mu.Unlock()
	c.wd.mu.Lock()
	n["wd.queue"] = len(c.wd.queue)
	n["wd.orphans"] = len(c.wd.orphans)
	n["wd.dedicated"] = len(c.wd.dedicated)
	c.wd.mu.Unlock()
	multiOwned.mu.Lock()
	n["multiOwned"] = len(multiOwned.m) + len(multiOwned.unlocking)
	multiOwned.mu.Unlock()
	redOwned.mu.Lock()
	n["redOwned"] = len(redOwned.m) + len(redOwned.unlocking)
	redOwned.mu.Unlock()
	return n
}

// waitEntriesGone waits (up to bound) until no entry is left, and fails
// naming the maps that kept some.
func waitEntriesGone(t *testing.T, c *Client, bound time.Duration, what string) {
	t.Helper()
	var left map[string]int
	deadline := time.Now().Add(bound)
	for {
		left = map[string]int{}
		for k, v := range clientEntries(c) {
			// handoffs keeps the releases of the last handoffGrace (10 ms),
			// dropped as others are added: a few, whatever the names.
			if v > 0 && (k != "subs.handoffs" || v > 16) {
				left[k] = v
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: per-lock entries left in the Client's state %s after every lock is gone: %v", what, bound, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Locking and unlocking many distinct names, with contention, cancelled
// waits, Extends and ForceUnlocks among them, leaves no per-name entry in
// any map of the Client once the locks are gone.
func TestManyNamesLeaveNoState(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	node := nodes[0]
	prefix := sharedPrefix(t)
	opts := []Option{prefix, WithWatchdog(2*time.Second, 600*time.Millisecond)}
	c := newTestClient(t, node.Client(t), opts...)
	rival := newTestClient(t, node.Client(t), opts...)
	reds := []*Client{c, newTestClient(t, nodes[1].Client(t), prefix), newTestClient(t, nodes[2].Client(t), prefix)}
	ctx := testCtx(t, 2*time.Minute)

	// 20,000 names a round, 4,000 under the race detector (which slows
	// each call tenfold) or -short; SCRIPTLOCK_LEAK_NAMES sets another
	// count (100000 runs in about 30 s a round).
	names := 20_000
	if raceEnabled || testing.Short() {
		names = 4_000
	}
	if v, err := strconv.Atoi(os.Getenv("SCRIPTLOCK_LEAK_NAMES")); err == nil && v > 0 {
		names = v
	}
	// Two rounds of distinct names: the heap after the second must not
	// have grown with it beyond what a round's own garbage explains.
	var heap [3]uint64
	heap[0] = heapAfterGC()
	goroutines := 0 // after the first round, once rueidis opened its connections
	for round := range 2 {
		start := time.Now()
		var wg sync.WaitGroup
		workers := 64
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := round*names + w; i < (round+1)*names; i += workers {
					if err := churnOne(ctx, c, rival, reds, i); err != nil {
						errs <- fmt.Errorf("name %d: %w", i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		t.Logf("round %d: %d names in %s", round, names, time.Since(start))
		waitEntriesGone(t, c, 5*time.Second, "many names")
		waitEntriesGone(t, rival, 5*time.Second, "many names (rival)")
		heap[round+1] = heapAfterGC()
		// The waits, their subscriptions and give-backs have all ended.
		if round == 0 {
			time.Sleep(1500 * time.Millisecond) // subscriptionLinger
			goroutines = len(clientGoroutines())
		} else if !eventually(5*time.Second, func() bool { return len(clientGoroutines()) <= goroutines }) {
			t.Errorf("round %d: the Clients run %d goroutines, %d after the first round:\n%s", round, len(clientGoroutines()), goroutines, strings.Join(clientGoroutines(), "\n\n"))
		}
	}
	t.Logf("heap in use: %d before, %d after a round, %d after two", heap[0], heap[1], heap[2])
	// The first round's growth (pools, connections, scripts, the
	// registries' maps) is not repeated; what a second round adds is noise
	// (up to about half a MB under the race detector): a leak of a few
	// hundred bytes a name shows above it.
	if grown := int64(heap[2]) - int64(heap[1]); grown > 1<<20+int64(names)*50 {
		t.Errorf("the heap grew by %d bytes over a second round of %d new names (%d bytes a name)", grown, names, grown/int64(names))
	}
}

// clientGoroutines are the stacks of the goroutines running the package's
// code, not a test's: other tests' servers and rueidis connections come and
// go beside.
func clientGoroutines() []string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "scriptlock/scriptlock.") && !strings.Contains(g, "_test.go") {
			out = append(out, g)
		}
	}
	return out
}

// heapAfterGC is the heap in use once garbage is collected.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	for range 2 { // finalizers run after the first
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// churnOne runs one name through one of the primitives' paths, chosen by i.
func churnOne(ctx context.Context, c, rival *Client, reds []*Client, i int) error {
	name := "n" + strconv.Itoa(i)
	owner := WithOwner(ctx, "o"+strconv.Itoa(i%97))
	k := i % 16
	switch k {
	case 3, 4, 9, 10, 11, 13, 14, 15:
		// The paths that wait (tens of ms) take an eighth of their turns,
		// plain Mutexes the rest, to keep the run short.
		if (i/16)%8 != 0 {
			k = 0
		}
	}
	switch k {
	case 0, 1, 2: // Mutex, sometimes re-entered and extended
		m, err := c.Mutex(name)
		if err != nil {
			return err
		}
		lctx, err := m.Lock(owner)
		if err != nil {
			return err
		}
		if i%3 == 0 {
			if _, err := m.Lock(lctx); err != nil {
				return err
			}
			if err := m.Unlock(lctx); err != nil {
				return err
			}
		}
		return m.Unlock(lctx)
	case 3: // Mutex waited for: one wait gives up, one gets it
		m, _ := c.Mutex(name)
		r, _ := rival.Mutex(name)
		rctx, err := r.Lock(ctx)
		if err != nil {
			return err
		}
		if _, err := m.TryLock(owner, 20*time.Millisecond); err == nil {
			return fmt.Errorf("TryLock got a held lock")
		}
		go func() { time.Sleep(10 * time.Millisecond); _ = r.Unlock(rctx) }()
		lctx, err := m.Lock(owner)
		if err != nil {
			return err
		}
		return m.Unlock(lctx)
	case 4: // FairMutex, waited for
		f, _ := c.FairMutex(name)
		r, _ := rival.FairMutex(name)
		rctx, err := r.Lock(ctx)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(owner, 20*time.Millisecond)
		_, err = f.Lock(wctx)
		cancel()
		if err == nil {
			return fmt.Errorf("Lock got a held fair lock")
		}
		go func() { time.Sleep(10 * time.Millisecond); _ = r.Unlock(rctx) }()
		lctx, err := f.Lock(owner)
		if err != nil {
			return err
		}
		return f.Unlock(lctx)
	case 5, 6: // LeanMutex, fenced or not, extended
		var o []LockOption
		if i%2 == 0 {
			o = append(o, WithFencing())
		}
		l, _ := c.LeanMutex(name, o...)
		lctx, err := l.LockWithLease(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if err := l.Extend(ctx, lctx, 5*time.Second); err != nil {
			return err
		}
		return l.Unlock(lctx)
	case 7: // RWMutex: readers of two owners, then a writer
		rw, _ := c.RWMutex(name)
		r1, err := rw.RLock(owner)
		if err != nil {
			return err
		}
		r2, err := rw.RLock(ctx)
		if err != nil {
			return err
		}
		_ = rw.RUnlock(r1)
		_ = rw.RUnlock(r2)
		wctx, err := rw.Lock(ctx)
		if err != nil {
			return err
		}
		return rw.Unlock(wctx)
	case 8: // Mutex force-unlocked under its holder
		m, _ := c.Mutex(name)
		lctx, err := m.LockWithLease(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if _, err := m.ForceUnlock(ctx); err != nil {
			return err
		}
		<-lctx.Done()
		_ = m.Unlock(lctx)
		return nil
	case 9: // Semaphore
		s, _ := c.Semaphore(name)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			return err
		}
		if err := s.Acquire(ctx, 1); err != nil {
			return err
		}
		if err := s.TryAcquire(ctx, 1, 10*time.Millisecond); err == nil {
			return fmt.Errorf("TryAcquire got a permit of none")
		}
		if err := s.Release(ctx, 1); err != nil {
			return err
		}
		_, err := s.Delete(ctx)
		return err
	case 10: // PermitSemaphore
		p, _ := c.PermitSemaphore(name)
		if _, err := p.TrySetPermits(ctx, 1); err != nil {
			return err
		}
		id, err := p.Acquire(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if _, err := p.TryAcquire(ctx, time.Second, 10*time.Millisecond); err == nil {
			return fmt.Errorf("TryAcquire got a permit of none")
		}
		if err := p.Release(ctx, id); err != nil {
			return err
		}
		_, err = p.Delete(ctx)
		return err
	case 11: // CountDownLatch
		l, _ := c.CountDownLatch(name)
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			return err
		}
		// A server that did not answer the wait's read within its 10ms (a
		// loaded machine) is an answer the API gives too: that wait must
		// leave nothing behind either.
		if ok, err := l.AwaitTimeout(ctx, 10*time.Millisecond); ok || err != nil && !unansweredErr(err) {
			return fmt.Errorf("AwaitTimeout = %v, %v", ok, err)
		}
		return l.CountDown(ctx)
	case 12: // MultiLock over two names
		a, _ := c.Mutex(name + "a")
		b, _ := c.FairMutex(name + "b")
		ml, err := NewMultiLock([]Locker{a, b})
		if err != nil {
			return err
		}
		lctx, err := ml.Lock(owner)
		if err != nil {
			return err
		}
		return ml.Unlock(lctx)
	case 13: // RedLock
		// The default node timeout (200 ms here) is what a release on a
		// node busy with 64 workers under the race detector can take.
		rl, err := NewRedLock(name, reds, WithNodeTimeout(time.Second))
		if err != nil {
			return err
		}
		lctx, err := rl.Lock(owner)
		if err != nil {
			return err
		}
		return rl.Unlock(lctx)
	default: // TryLock(0) refused, plain Mutex with a lease
		m, _ := c.Mutex(name)
		r, _ := rival.Mutex(name)
		rctx, err := r.LockWithLease(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if _, err := m.TryLock(owner, 0); err == nil {
			return fmt.Errorf("TryLock(0) got a held lock")
		}
		return r.Unlock(rctx)
	}
}
