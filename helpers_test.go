package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// newTestClient returns a scriptlock Client on rc with a per-test key prefix,
// closed at test end.
func newTestClient(t testing.TB, rc rueidis.Client, opts ...Option) *Client {
	t.Helper()
	c, err := New(rc, append([]Option{WithKeyPrefix(redistest.Prefix(t))}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// loadedGuard gives the failover guard 2 s for a replica's
// acknowledgement, not the default 100 ms, which a loaded machine's replica
// can miss: for tests with replicas that are not about the guard's timeout.
func loadedGuard() Option { return WithFailoverGuard(true, 2*time.Second) }

// sharedPrefix makes several Clients use the same key space: pass the one
// Option it returns to each of them (every call makes a new prefix).
func sharedPrefix(t testing.TB) Option { return WithKeyPrefix(redistest.Prefix(t)) }

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// rawClient connects to addr directly (for example through a netproxy).
func rawClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("rueidis client for %s: %v", addr, err)
	}
	t.Cleanup(rc.Close)
	return rc
}

// countAt reads a counter key: a semaphore's permits, a latch's count (0
// when the key does not exist: a latch counted down to zero is deleted).
func countAt(t testing.TB, n *redistest.Node, key string) int64 {
	t.Helper()
	v, err := n.Do(t, "GET", key).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v
}

func dbsize(t testing.TB, n *redistest.Node) int64 {
	t.Helper()
	v, err := n.Do(t, "DBSIZE").AsInt64()
	if err != nil {
		t.Fatalf("DBSIZE: %v", err)
	}
	return v
}

// keyNames returns the names of the keys on n.
func keyNames(t testing.TB, n *redistest.Node) map[string]bool {
	t.Helper()
	keys, err := n.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	names := make(map[string]bool, len(keys))
	for _, k := range keys {
		names[k] = true
	}
	return names
}

// keysBesideRecords lists the keys on n other than the records of calls'
// answers named under recordPrefix (recordPrefix + ":..."), and fails when
// such a record would outlive a minute.
func keysBesideRecords(t testing.TB, n *redistest.Node, recordPrefix string) []string {
	t.Helper()
	keys, err := n.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, k := range keys {
		if strings.HasPrefix(k, recordPrefix+":") {
			if ttl, err := n.Do(t, "PTTL", k).AsInt64(); err != nil || ttl <= 0 || ttl > time.Minute.Milliseconds() {
				t.Fatalf("record %s: PTTL %d ms, %v; want a minute at most", k, ttl, err)
			}
			continue
		}
		others = append(others, k)
	}
	return others
}

// ownerIn is the owner a lock context carries.
func ownerIn(ctx context.Context) string {
	o, _ := OwnerFrom(ctx)
	return o
}

// Handle constructors for tests: an error is a test failure.

func mustMutex(t testing.TB, c *Client, name string, opts ...LockOption) *Mutex {
	t.Helper()
	m, err := c.Mutex(name, opts...)
	if err != nil {
		t.Fatalf("Mutex(%q): %v", name, err)
	}
	return m
}

func mustFair(t testing.TB, c *Client, name string, opts ...LockOption) *FairMutex {
	t.Helper()
	f, err := c.FairMutex(name, opts...)
	if err != nil {
		t.Fatalf("FairMutex(%q): %v", name, err)
	}
	return f
}

func mustLean(t testing.TB, c *Client, name string, opts ...LockOption) *LeanMutex {
	t.Helper()
	l, err := c.LeanMutex(name, opts...)
	if err != nil {
		t.Fatalf("LeanMutex(%q): %v", name, err)
	}
	return l
}

func mustRW(t testing.TB, c *Client, name string, opts ...LockOption) *RWMutex {
	t.Helper()
	rw, err := c.RWMutex(name, opts...)
	if err != nil {
		t.Fatalf("RWMutex(%q): %v", name, err)
	}
	return rw
}

func mustSem(t testing.TB, c *Client, name string, opts ...LockOption) *Semaphore {
	t.Helper()
	s, err := c.Semaphore(name, opts...)
	if err != nil {
		t.Fatalf("Semaphore(%q): %v", name, err)
	}
	return s
}

func mustPermits(t testing.TB, c *Client, name string, opts ...LockOption) *PermitSemaphore {
	t.Helper()
	s, err := c.PermitSemaphore(name, opts...)
	if err != nil {
		t.Fatalf("PermitSemaphore(%q): %v", name, err)
	}
	return s
}

func mustLatch(t testing.TB, c *Client, name string, opts ...LockOption) *CountDownLatch {
	t.Helper()
	l, err := c.CountDownLatch(name, opts...)
	if err != nil {
		t.Fatalf("CountDownLatch(%q): %v", name, err)
	}
	return l
}

func mustMulti(t testing.TB, locks []Locker, opts ...MultiLockOption) *MultiLock {
	t.Helper()
	m, err := NewMultiLock(locks, opts...)
	if err != nil {
		t.Fatalf("NewMultiLock: %v", err)
	}
	return m
}

// mustRedLock is NewRedLock, failing the test on an error. Without
// WithNodeTimeout among opts, the node timeout is 1 s (a quarter of
// the lease, if that is less) rather than the default, 200 ms, which a
// loaded race run's round trip can pass: a test that measures the default
// calls NewRedLock.
func mustRedLock(t testing.TB, name string, cs []*Client, opts ...RedLockOption) *RedLock {
	t.Helper()
	var given redLockConfig
	for _, o := range opts {
		if o != nil {
			o.applyRedLock(&given)
		}
	}
	r, err := NewRedLock(name, cs, opts...)
	if err == nil && given.nodeTimeout == 0 {
		if nt := min(time.Second, r.validityLease()/4); nt > r.nodeTimeout {
			r, err = NewRedLock(name, cs, append([]RedLockOption{WithNodeTimeout(nt)}, opts...)...)
		}
	}
	if err != nil {
		t.Fatalf("NewRedLock(%q): %v", name, err)
	}
	return r
}

// roomyNodeTimeout is a RedLock node timeout for tests whose nodes must all
// answer an attempt (a check of their servers' run_ids, a refusal that
// needs every node's answer): a loaded race run's round trip can pass the
// default, 200 ms, and a node answering late leaves a majority of the others.
var roomyNodeTimeout = WithNodeTimeout(2 * time.Second)

// lockEveryNode locks r and returns its context once every node granted
// the lock: a majority is enough for Lock, and on a loaded machine a node
// answering after the node timeout leaves a quorum without it. A test that
// cuts off or checks a given node needs that node's grant.
func lockEveryNode(t testing.TB, ctx context.Context, r *RedLock) context.Context {
	t.Helper()
	all := make([]bool, len(r.nodes))
	for i := range all {
		all[i] = true
	}
	return lockHeldOn(t, ctx, r, all)
}

// lockHeldOn locks r until the hold stands on the nodes want names (HeldOn),
// giving back each Lock that does not, and returns its context.
func lockHeldOn(t testing.TB, ctx context.Context, r *RedLock, want []bool) context.Context {
	t.Helper()
	var held []bool
	for range 20 {
		lctx, err := r.Lock(ctx)
		if err != nil {
			t.Fatalf("RedLock %q: Lock: %v", r.name, err)
		}
		if held = r.HeldOn(lctx); held == nil {
			t.Fatalf("RedLock %q: the context Lock returned carries no hold", r.name)
		}
		if slices.Equal(held, want) {
			return lctx
		}
		redUnlock(t, r, lctx, held)
		// A late grant that reached its node after its undo holds it until
		// the undo looks again (a quarter of a second later): tried again
		// at once, every try could meet it.
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("RedLock %q: no Lock in 20 stood on nodes %v (the last on %v)", r.name, want, held)
	return nil
}

// redUnlock unlocks r's hold lctx (on nodes held), asking the nodes that
// did not confirm again, as Unlock's error says to: each node's release is
// bounded by the node timeout, which a loaded machine can outlast.
func redUnlock(t testing.TB, r *RedLock, lctx context.Context, held []bool) {
	t.Helper()
	var err error
	for i := range 5 {
		err = r.Unlock(lctx)
		if err == nil || (i > 0 && errors.Is(err, ErrNotHeld)) {
			return // asked again: the release that timed out went through
		}
	}
	t.Fatalf("RedLock %q: Unlock of a hold on nodes %v, asked 5 times: %v", r.name, held, err)
}

// awaitRunsOut waits d on l, a counting latch whose count stays above zero
// with the server answering, up to three times until a wait answers false,
// nil. A wait's last read is cut off 100 ms past its end: on a loaded machine
// its answer may come later, and the wait then reports Unanswered as
// documented (docs/guarantees.md), which is allowed; any other outcome fails.
func awaitRunsOut(t testing.TB, ctx context.Context, l *CountDownLatch, d time.Duration) {
	t.Helper()
	for range 3 {
		ok, err := l.AwaitTimeout(ctx, d)
		var na *NotAcquiredError
		if ok || (err != nil && (!errors.As(err, &na) || !na.Unanswered)) {
			t.Fatalf("AwaitTimeout, count above zero: %v, %v; want false, nil", ok, err)
		}
		if err == nil {
			return
		}
	}
	t.Fatalf("AwaitTimeout, count above zero: Unanswered three times with the server answering; want false, nil")
}

// lockedAt locks m on a goroutine of its own and sends the time it got the
// lock, then unlocks it; a Lock that fails is reported with t.Error and sends
// the zero time.
func lockedAt(t testing.TB, ctx context.Context, m *Mutex) <-chan time.Time {
	got := make(chan time.Time, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err != nil {
			t.Error(err)
			got <- time.Time{}
			return
		}
		got <- time.Now()
		_ = m.Unlock(l)
	}()
	return got
}

// acquiredAt acquires a permit of p with a minute's lease on a goroutine of
// its own and sends the time Acquire returned; an error while ctx is live is
// reported with t.Error.
func acquiredAt(t testing.TB, ctx context.Context, p *PermitSemaphore) <-chan time.Time {
	got := make(chan time.Time, 1)
	go func() {
		if _, err := p.Acquire(ctx, time.Minute); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	return got
}

// subWaiter is a semaphore whose only permit a Client on one server holds,
// and a second TryAcquire of it waiting (10 s) on its channel: what the
// tests of ending a subscription share. leave ends the wait; waited gets
// its result.
type subWaiter struct {
	rc     rueidis.Client
	c      *Client
	s      *Semaphore
	ctx    context.Context
	leave  context.CancelFunc
	waited chan error
}

// subscribedWaiter returns once the waiter is subscribed.
func subscribedWaiter(t *testing.T, node *redistest.Node, name string) *subWaiter {
	t.Helper()
	w := &subWaiter{rc: node.Client(t)}
	w.c = newTestClient(t, w.rc, WithFailoverGuard(false, 0))
	w.s = mustSem(t, w.c, name)
	w.ctx = testCtx(t, 20*time.Second)
	if _, err := w.s.TrySetPermits(w.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.s.TryAcquire(w.ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	wctx, leave := context.WithCancel(w.ctx)
	w.leave = leave
	w.waited = make(chan error, 1)
	go func() { w.waited <- w.s.TryAcquire(wctx, 1, 10*time.Second) }()
	if !eventually(5*time.Second, func() bool { return subscribers(t, node, false, w.s.channel) == 1 }) {
		t.Fatal("the waiter did not subscribe")
	}
	return w
}

// stressSlot is held by the one stress test running: one that makes
// thousands of round trips in a loop, keeping a core busy for as long as it
// runs. Several at once on a 2-core machine slowed every other test's round
// trips many times over (a 2,000-round loop took 57 s beside them, 3 s
// without), past the time bounds of tests that check them.
var stressSlot = make(chan struct{}, 1)

// stress waits for stressSlot, held until the test ends. Call it first
// thing after t.Parallel, before any deadline is set.
func stress(t *testing.T) {
	t.Helper()
	stressSlot <- struct{}{}
	t.Cleanup(func() { <-stressSlot })
}

// waiting runs subtests all at once within the calling test's one slot of
// go test's -parallel, for cases that spend their seconds waiting on delayed
// links and leases, not on the CPU: as parallel subtests each would hold a
// slot for all that time, keeping tests that are ready to run waiting. Run
// starts one; Wait, deferred right after waitingSubtests, returns once all
// have ended, as testing requires of subtests run from other goroutines.
// The subtests must not call t.Parallel.
type waiting struct {
	t  *testing.T
	wg sync.WaitGroup
}

func waitingSubtests(t *testing.T) *waiting { return &waiting{t: t} }

func (w *waiting) Run(name string, f func(t *testing.T)) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.t.Run(name, f)
	}()
}

func (w *waiting) Wait() { w.wg.Wait() }

// acked makes a guarded call again, up to five times in all, while it fails
// with ErrNotReplicated: with every replica running, a loaded machine can
// leave a replica's acknowledgement past a short guard timeout (the
// acquisition is undone, so a repeat starts afresh). A guard that never
// gets the acknowledgement still fails all five.
func acked(f func() error) error {
	err := f()
	for i := 1; i < 5 && errors.Is(err, ErrNotReplicated); i++ {
		err = f()
	}
	return err
}

// replicatedLock is acked for a call that returns a lock context.
func replicatedLock(lock func() (context.Context, error)) (context.Context, error) {
	var lctx context.Context
	err := acked(func() (err error) { lctx, err = lock(); return err })
	return lctx, err
}

// setHook stores f in p, or nothing for a nil f: the Client's test hooks
// are read while its goroutines run.
func setHook[F any](p *atomic.Pointer[F], f F) {
	if reflect.ValueOf(&f).Elem().IsNil() {
		p.Store(nil)
		return
	}
	p.Store(&f)
}

func (c *Client) setGrantHook(f func())     { setHook(&c.grantHook, f) }
func (c *Client) setLeaseMarkHook(f func()) { setHook(&c.leaseMarkHook, f) }
func (c *Client) setAttemptHook(f func(ctx context.Context, after bool)) {
	setHook(&c.testHookAttempt, f)
}

// scriptACLRefusal tells whether err is Redis's refusal of a command a
// script called that the ACL user may not run. Redis 7.0 words it "The user
// executing the script can't run this command or subcommand"; 7.2 and newer
// name the user and the command: "ACL failure in script: User u has no
// permissions to run the 'incr' command".
func scriptACLRefusal(err error) bool {
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.Contains(msg, "can't run this command") || strings.Contains(msg, "ACL failure in script")
}

// serverAtLeast tells whether the node's redis_version is major.minor or
// newer, for a test that reads something Redis changed.
func serverAtLeast(t *testing.T, n *redistest.Node, major, minor int) bool {
	t.Helper()
	info, err := n.Do(t, "INFO", "server").ToString()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "redis_version:")
	var ma, mi int
	if _, err := fmt.Sscanf(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), "%d.%d", &ma, &mi); err != nil {
		t.Fatalf("INFO server: redis_version unread: %v", err)
	}
	return ma > major || ma == major && mi >= minor
}
