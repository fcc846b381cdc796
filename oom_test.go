package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func isOOM(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "OOM")
}

// TestReleaseUnderMemoryPressure: a server out of memory refuses new
// acquisitions, but everything that gives a lock or permit back, renews a
// hold or leaves a queue still runs. Otherwise a re-entrant Unlock fails and
// leaves the lock to its lease, a Semaphore's released permits are lost for
// good, a latch cannot count down, and read locks are lost when their
// renewal fails.
func TestReleaseUnderMemoryPressure(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	rc := n.Client(t)
	// A hold is lost once no renewal is confirmed for about its lease, and
	// renewals come every 300ms: with a 1.2s lease a loaded machine
	// sometimes confirmed none in time, out of memory or not, and holds
	// the subtests keep were lost. The renewals subtest still sleeps twice
	// the lease, which no hold outlives unless renewals succeed.
	const lease, every = 2400 * time.Millisecond, 300 * time.Millisecond
	c := newTestClient(t, rc, WithWatchdog(lease, every))
	ctx := testCtx(t, 60*time.Second)

	t.Run("renewals", func(t *testing.T) {
		type held struct {
			what string
			key  string
			lctx context.Context
		}
		var hs []held
		take := func(what, key string, lctx context.Context, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			hs = append(hs, held{what, key, lctx})
		}
		m := mustMutex(t, c, "renew-m")
		l, err := m.Lock(ctx)
		take("Mutex", m.Key(), l, err)
		f := mustFair(t, c, "renew-f")
		l, err = f.Lock(ctx)
		take("FairMutex", f.Key(), l, err)
		rw := mustRW(t, c, "renew-rw")
		l, err = rw.RLock(ctx)
		take("RWMutex read", rw.Key(), l, err)
		rw2 := mustRW(t, c, "renew-rw2")
		l, err = rw2.Lock(ctx)
		take("RWMutex write", rw2.Key(), l, err)
		lm := mustLean(t, c, "renew-lean")
		l, err = lm.Lock(ctx)
		take("LeanMutex", lm.Key(), l, err)

		restore := n.OutOfMemory(t)
		time.Sleep(2 * lease) // several renewals, each due well before the lease ends
		for _, h := range hs {
			if err := context.Cause(h.lctx); err != nil {
				t.Errorf("%s held through renewals while out of memory: its context ended: %v", h.what, err)
			}
			if ttl, _ := n.Do(t, "PTTL", h.key).AsInt64(); ttl <= 0 {
				t.Errorf("%s: PTTL %d after renewals while out of memory, want the lease renewed", h.what, ttl)
			}
		}
		restore()
	})

	t.Run("re-entrant unlock", func(t *testing.T) {
		m := mustMutex(t, c, "reent-m")
		f := mustFair(t, c, "reent-f")
		fr := mustFair(t, c, "reent-fr", WithRedissonFairQueue(5*time.Second))
		rw := mustRW(t, c, "reent-rw")
		rw2 := mustRW(t, c, "reent-rw2")
		cases := []struct {
			what    string
			key     string
			lock    func(context.Context) (context.Context, error)
			release func(context.Context) error
		}{
			{"Mutex", m.Key(), m.Lock, m.Unlock},
			{"FairMutex", f.Key(), f.Lock, f.Unlock},
			{"FairMutex (Redisson queue)", fr.Key(), fr.Lock, fr.Unlock},
			{"RWMutex read", rw.Key(), rw.RLock, rw.RUnlock},
			{"RWMutex write", rw2.Key(), rw2.Lock, rw2.Unlock},
		}
		for _, tc := range cases {
			l1, err := tc.lock(ctx)
			if err != nil {
				t.Fatalf("%s: %v", tc.what, err)
			}
			l2, err := tc.lock(l1)
			if err != nil {
				t.Fatalf("%s re-entry: %v", tc.what, err)
			}
			restore := n.OutOfMemory(t)
			if err := tc.release(l2); err != nil {
				t.Errorf("%s: inner unlock while out of memory: %v", tc.what, err)
			}
			if err := context.Cause(l1); err != nil {
				t.Errorf("%s: the outer hold ended after the inner unlock: %v", tc.what, err)
			}
			if err := tc.release(l1); err != nil {
				t.Errorf("%s: last unlock while out of memory: %v", tc.what, err)
			}
			restore()
			if ex, _ := n.Do(t, "EXISTS", tc.key).AsInt64(); ex != 0 {
				t.Errorf("%s: the lock is still on the server after both unlocks", tc.what)
			}
		}
	})

	t.Run("force unlock and delete", func(t *testing.T) {
		m := mustMutex(t, c, "force-m")
		if _, err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		lm := mustLean(t, c, "force-lean")
		if _, err := lm.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		s := mustSem(t, c, "del-sem")
		if _, err := s.TrySetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		l := mustLatch(t, c, "del-latch")
		if _, err := l.TrySetCount(ctx, 3); err != nil {
			t.Fatal(err)
		}
		restore := n.OutOfMemory(t)
		for _, tc := range []struct {
			what string
			key  string
			call func(context.Context) (bool, error)
		}{
			{"Mutex.ForceUnlock", m.Key(), m.ForceUnlock},
			{"LeanMutex.ForceUnlock", lm.Key(), lm.ForceUnlock},
			{"Semaphore.Delete", s.Key(), s.Delete},
			{"CountDownLatch.Delete", l.Key(), l.Delete},
		} {
			if ok, err := tc.call(ctx); err != nil || !ok {
				t.Errorf("%s while out of memory: %v, %v; want true, <nil>", tc.what, ok, err)
			}
			if ex, _ := n.Do(t, "EXISTS", tc.key).AsInt64(); ex != 0 {
				t.Errorf("%s while out of memory left the key", tc.what)
			}
		}
		restore()
	})

	t.Run("semaphore release", func(t *testing.T) {
		s := mustSem(t, c, "sem")
		if _, err := s.TrySetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, 2); err != nil {
			t.Fatal(err)
		}
		restore := n.OutOfMemory(t)
		if err := s.Release(ctx, 2); err != nil {
			t.Errorf("Semaphore.Release while out of memory: %v", err)
		}
		restore()
		if got, err := s.AvailablePermits(ctx); err != nil || got != 3 {
			t.Errorf("permits after the release: %d, %v; want 3", got, err)
		}
	})

	t.Run("semaphore undo", func(t *testing.T) {
		// An acquisition whose reply was lost is undone from its latch; the
		// undo's first write is the latch's SET, which a full server refuses
		// unless the script may run out of memory.
		s := mustSem(t, c, "sem-undo")
		if _, err := s.TrySetPermits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		latch := redissonName("redisson_sc_latch", s.key) + ":" + c.id + ":undo"
		if res, err := generated.SemaphoreAcquire(ctx, rc, s.key, latch, s.deleted, 2, recordTTL); err != nil || res.Ok != 1 {
			t.Fatalf("acquisition to undo: %+v, %v", res, err)
		}
		restore := n.OutOfMemory(t)
		s.undo(latch, 2, s.cfg.releaseTimeout)
		got, err := s.AvailablePermits(ctx)
		restore()
		if err != nil || got != 3 {
			t.Errorf("permits after the undo while out of memory: %d, %v; want 3", got, err)
		}
	})

	t.Run("permit release", func(t *testing.T) {
		p := mustPermits(t, c, "permits")
		if _, err := p.TrySetPermits(ctx, 2); err != nil {
			t.Fatal(err)
		}
		id, err := p.Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		id2, err := p.Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		restore := n.OutOfMemory(t)
		if err := p.Extend(ctx, id2, 2*time.Minute); err != nil {
			t.Errorf("PermitSemaphore.Extend while out of memory: %v", err)
		}
		if err := p.Release(ctx, id); err != nil {
			t.Errorf("PermitSemaphore.Release while out of memory: %v", err)
		}
		restore()
		if got, err := p.AvailablePermits(ctx); err != nil || got != 1 {
			t.Errorf("permits after the release: %d, %v; want 1", got, err)
		}
	})

	t.Run("latch count down", func(t *testing.T) {
		l := mustLatch(t, c, "latch")
		if _, err := l.TrySetCount(ctx, 2); err != nil {
			t.Fatal(err)
		}
		restore := n.OutOfMemory(t)
		for i := range 2 {
			if err := l.CountDown(ctx); err != nil {
				t.Errorf("CountDown %d while out of memory: %v", i+1, err)
			}
		}
		restore()
		if ok, err := l.AwaitTimeout(ctx, time.Second); err != nil || !ok {
			t.Errorf("AwaitTimeout after two count-downs: %v, %v; want true", ok, err)
		}
	})

	t.Run("waits end", func(t *testing.T) {
		// A waiter registered before the server ran out of memory leaves
		// its queue when its wait ends: left there, it would hold up the
		// waiters behind it until its registration times out.
		w := newTestClient(t, n.Client(t), WithKeyPrefix(c.cfg.prefix), WithWatchdog(lease, every))
		registrations := func(name string) []string {
			keys, err := n.Do(t, "KEYS", "*"+name+"*").AsStrSlice()
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, k := range keys {
				for _, r := range registrationKeys {
					if strings.HasPrefix(k, r) {
						out = append(out, k)
					}
				}
			}
			return out
		}
		for _, kind := range []string{"Mutex", "FairMutex", "FairMutexRedissonQueue", "RWMutexWriter"} {
			name := "wait-" + kind
			holder := waitLocker(t, kind, c, name)
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := waitLocker(t, kind, w, name).Lock(wctx)
				done <- err
			}()
			if !eventually(2*time.Second, func() bool { return len(registrations(name)) > 0 }) {
				t.Fatalf("%s: the waiter never registered", kind)
			}
			restore := n.OutOfMemory(t)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("%s: wait ended with %v, want context.Canceled", kind, err)
			}
			var left []string
			if !eventually(time.Second, func() bool { left = registrations(name); return len(left) == 0 }) {
				t.Errorf("%s: registration %v left a second after the wait ended while out of memory", kind, left)
			}
			restore()
			if err := holder.Unlock(hctx); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
	})

	t.Run("waits wait it out", func(t *testing.T) {
		// A refusal for memory ran nothing: a Lock that may wait calls
		// again until the server has memory or its ctx ends.
		m := mustMutex(t, c, "wait-out")
		restore := n.OutOfMemory(t)
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if _, err := m.Lock(short); !errors.Is(err, context.DeadlineExceeded) || !isOOM(err) {
			t.Errorf("Lock whose ctx ends while out of memory: %v, want both the deadline and Redis's OOM error", err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(l)
			}
			got <- err
		}()
		time.Sleep(500 * time.Millisecond)
		select {
		case err := <-got:
			t.Fatalf("Lock returned while out of memory: %v", err)
		default:
		}
		restore()
		select {
		case err := <-got:
			if err != nil {
				t.Errorf("Lock once memory is back: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("Lock still waiting 2 s after memory came back")
		}
	})

	t.Run("acquisitions refused", func(t *testing.T) {
		d := mustSem(t, c, "refused-d")
		if _, err := d.TrySetPermits(ctx, 2); err != nil {
			t.Fatal(err)
		}
		before := keyNames(t, n)
		restore := n.OutOfMemory(t)
		m := mustMutex(t, c, "refused-m")
		if _, err := m.TryLock(ctx, 0); !isOOM(err) {
			t.Errorf("Mutex.TryLock while out of memory: %v, want Redis's OOM error", err)
		}
		s := mustSem(t, c, "refused-s")
		if _, err := s.TrySetPermits(ctx, 1); !isOOM(err) {
			t.Errorf("Semaphore.TrySetPermits while out of memory: %v, want Redis's OOM error", err)
		}
		// Its record is reserved first: the reservation is refused as well.
		if _, err := d.DrainPermits(ctx); !isOOM(err) {
			t.Errorf("Semaphore.DrainPermits while out of memory: %v, want Redis's OOM error", err)
		}
		restore()
		if left, err := d.AvailablePermits(ctx); err != nil || left != 2 {
			t.Errorf("AvailablePermits after a refused DrainPermits = %d, %v; want 2", left, err)
		}
		// Nothing added; a key the subtests before left with a short life
		// (a call's record) may expire meanwhile.
		for k := range keyNames(t, n) {
			if !before[k] {
				t.Errorf("key %s written by the refused acquisitions", k)
			}
		}
	})
}
