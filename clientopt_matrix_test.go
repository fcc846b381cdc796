package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClientOptionMatrix runs every primitive, its waits woken by release
// messages, on the rueidis configurations services hand in.
func TestClientOptionMatrix(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	clientFor := func(t *testing.T, o func(*rueidis.ClientOption)) rueidis.Client { return n.Client(t, o) }
	runMatrix(t, clientFor)
}

func TestClientOptionMatrixSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t)
	clientFor := func(t *testing.T, o func(*rueidis.ClientOption)) rueidis.Client { return s.Client(t, o) }
	runMatrix(t, clientFor)
}

func runMatrix(t *testing.T, clientFor func(*testing.T, func(*rueidis.ClientOption)) rueidis.Client) {
	cases := []struct {
		name string
		opt  func(*rueidis.ClientOption)
	}{
		{"AlwaysRESP2", func(o *rueidis.ClientOption) { o.AlwaysRESP2 = true }},
		{"SelectDB", func(o *rueidis.ClientOption) { o.SelectDB = 3 }},
		{"DisableAutoPipelining", func(o *rueidis.ClientOption) { o.DisableAutoPipelining = true }},
		{"Cache", func(o *rueidis.ClientOption) { o.DisableCache = false }},
		{"NotSingle", func(o *rueidis.ClientOption) { o.ForceSingleClient = false }},
		{"RESP2Pool1", func(o *rueidis.ClientOption) { o.AlwaysRESP2 = true; o.BlockingPoolSize = 1 }},
		{"SendToReplicas", func(o *rueidis.ClientOption) {
			o.SendToReplicas = func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }
		}},
		{"BlockingPool1", func(o *rueidis.ClientOption) { o.BlockingPoolSize = 1 }},
		{"Multiplex", func(o *rueidis.ClientOption) { o.PipelineMultiplex = 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The cases share the server but not keys (each Client has its
			// own prefix), and spend their time waiting.
			t.Parallel()
			rc := clientFor(t, tc.opt)
			// The failover guard stays on (a Sentinel's primary has a
			// replica): within the default 100ms the replica sometimes did
			// not acknowledge, and an acquisition failed with
			// ErrNotReplicated. What this test checks is the wake-ups.
			c := newTestClient(t, rc, loadedGuard())
			ctx := testCtx(t, 30*time.Second)
			// A waiter must be woken by the release, well before the
			// holder's lease would end, and before the poll that covers a
			// lost message: with every message dropped, the Mutex waiter
			// here woke by that poll 1.47s after the release, which a limit
			// of notifyFallback (2s) let pass.
			const lease = 20 * time.Second
			const wakeLimit = time.Second
			m, _ := c.Mutex("m")
			hctx, err := m.LockWithLease(ctx, lease)
			if err != nil {
				t.Fatalf("Mutex lock: %v", err)
			}
			st, err := m.State(hctx)
			if err != nil || !st.Locked || st.HoldCount != 1 || st.Lease <= 0 {
				t.Fatalf("Mutex state: %+v %v", st, err)
			}
			woke := make(chan error, 1)
			go func() {
				m2, _ := c.Mutex("m")
				_, err := m2.TryLock(ctx, 10*time.Second)
				woke <- err
			}()
			time.Sleep(200 * time.Millisecond)
			start := time.Now()
			if err := m.Unlock(hctx); err != nil {
				t.Fatalf("Mutex unlock: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("Mutex waiter: %v", err)
			}
			if d := time.Since(start); d > wakeLimit {
				t.Fatalf("Mutex waiter woke after %v", d)
			}

			f, _ := c.FairMutex("f")
			fctx, err := f.LockWithLease(ctx, lease)
			if err != nil {
				t.Fatalf("Fair lock: %v", err)
			}
			go func() {
				f2, _ := c.FairMutex("f")
				_, err := f2.TryLock(ctx, 10*time.Second)
				woke <- err
			}()
			time.Sleep(200 * time.Millisecond)
			start = time.Now()
			if err := f.Unlock(fctx); err != nil {
				t.Fatalf("Fair unlock: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("Fair waiter: %v", err)
			}
			if d := time.Since(start); d > wakeLimit {
				t.Fatalf("Fair waiter woke after %v", d)
			}

			rw, _ := c.RWMutex("rw")
			rctx, err := rw.RLockWithLease(ctx, lease)
			if err != nil {
				t.Fatalf("RLock: %v", err)
			}
			rs, err := rw.State(rctx)
			if err != nil || rs.Mode != "read" || rs.Reads != 1 {
				t.Fatalf("RW state: %+v %v", rs, err)
			}
			go func() {
				rw2, _ := c.RWMutex("rw")
				_, err := rw2.TryLock(ctx, 10*time.Second)
				woke <- err
			}()
			time.Sleep(200 * time.Millisecond)
			start = time.Now()
			if err := rw.RUnlock(rctx); err != nil {
				t.Fatalf("RUnlock: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("RW waiter: %v", err)
			}
			if d := time.Since(start); d > wakeLimit {
				t.Fatalf("RW waiter woke after %v", d)
			}

			s, _ := c.Semaphore("s")
			if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetPermits: %v %v", ok, err)
			}
			if err := s.Acquire(ctx, 1); err != nil {
				t.Fatalf("Semaphore acquire: %v", err)
			}
			go func() { woke <- s.TryAcquire(ctx, 1, 10*time.Second) }()
			time.Sleep(200 * time.Millisecond)
			if err := s.Release(ctx, 1); err != nil {
				t.Fatalf("Semaphore release: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("Semaphore waiter: %v", err)
			}
			if v, err := s.AvailablePermits(ctx); v != 0 || err != nil {
				t.Fatalf("AvailablePermits: %v %v", v, err)
			}

			ps, _ := c.PermitSemaphore("ps")
			if ok, err := ps.TrySetPermits(ctx, 1); !ok || err != nil {
				t.Fatalf("Permit TrySetPermits: %v %v", ok, err)
			}
			id, err := ps.Acquire(ctx, lease)
			if err != nil {
				t.Fatalf("Permit acquire: %v", err)
			}
			if err := ps.Extend(ctx, id, lease); err != nil {
				t.Fatalf("Permit extend: %v", err)
			}
			pst, err := ps.State(ctx)
			if err != nil || pst.Held != 1 || pst.Available != 0 {
				t.Fatalf("Permit state: %+v %v", pst, err)
			}
			go func() {
				_, err := ps.TryAcquire(ctx, lease, 10*time.Second)
				woke <- err
			}()
			time.Sleep(200 * time.Millisecond)
			start = time.Now()
			if err := ps.Release(ctx, id); err != nil {
				t.Fatalf("Permit release: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("Permit waiter: %v", err)
			}
			if d := time.Since(start); d > wakeLimit {
				t.Fatalf("Permit waiter woke after %v", d)
			}

			l, _ := c.CountDownLatch("l")
			if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
				t.Fatalf("TrySetCount: %v %v", ok, err)
			}
			go func() {
				ok, err := l.AwaitTimeout(ctx, 10*time.Second)
				if err == nil && !ok {
					err = errTimeoutForTest
				}
				woke <- err
			}()
			time.Sleep(200 * time.Millisecond)
			if err := l.CountDown(ctx); err != nil {
				t.Fatalf("CountDown: %v", err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("Await: %v", err)
			}

			lm, _ := c.LeanMutex("lm")
			lctx, err := lm.LockWithLease(ctx, lease)
			if err != nil {
				t.Fatalf("Lean lock: %v", err)
			}
			if err := lm.Extend(ctx, lctx, lease); err != nil {
				t.Fatalf("Lean extend: %v", err)
			}
			if ls, err := lm.State(lctx); err != nil || !ls.Locked {
				t.Fatalf("Lean state: %+v %v", ls, err)
			}
			if err := lm.Unlock(lctx); err != nil {
				t.Fatalf("Lean unlock: %v", err)
			}
			// Watchdog renewals.
			wm, _ := c.Mutex("w")
			wctx, err := wm.Lock(ctx)
			if err != nil {
				t.Fatalf("watchdog lock: %v", err)
			}
			if err := wm.Unlock(wctx); err != nil {
				t.Fatalf("watchdog unlock: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

var errTimeoutForTest = errorString("await timed out")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestClientOptionMatrixCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	clientFor := func(t *testing.T, o func(*rueidis.ClientOption)) rueidis.Client {
		return cl.Client(t, func(opt *rueidis.ClientOption) {
			o(opt)
			opt.SelectDB = 0
			opt.ForceSingleClient = false
		})
	}
	runMatrix(t, clientFor)
}
