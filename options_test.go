package scriptlock

import (
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An option at a level it does not belong to is a compile error, not an
// option that silently does nothing: the Go type checker is the test.
func TestOptionLevelsCompile(t *testing.T) {
	t.Parallel()
	// go test puts its own toolchain first on PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to type-check testdata: %v", err)
	}
	build := func(dir string) (string, error) {
		cmd := exec.Command(gobin, "vet", "./testdata/options/"+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := build("good"); err != nil {
		t.Fatalf("options at their own levels do not compile: %v\n%s", err, out)
	}
	for _, c := range []struct{ dir, want string }{
		{"clientonly", "scriptlock.Option does not implement scriptlock.LockOption"},
		{"kindonly", "scriptlock.RedLockOption does not implement scriptlock.LockOption"},
	} {
		out, err := build(c.dir)
		if err == nil {
			t.Errorf("%s: compiled", c.dir)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: compile error does not say %q:\n%s", c.dir, c.want, out)
		}
	}
}

// Handle constructors validate the name and the options where they are
// given: a bad one is a typed error, no handle, and nothing in Redis.
func TestConstructorsValidate(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	type ctor func(name string, opts ...LockOption) error
	ctors := map[string]ctor{
		"Mutex":           func(n string, o ...LockOption) error { _, err := c.Mutex(n, o...); return err },
		"FairMutex":       func(n string, o ...LockOption) error { _, err := c.FairMutex(n, o...); return err },
		"RWMutex":         func(n string, o ...LockOption) error { _, err := c.RWMutex(n, o...); return err },
		"Semaphore":       func(n string, o ...LockOption) error { _, err := c.Semaphore(n, o...); return err },
		"PermitSemaphore": func(n string, o ...LockOption) error { _, err := c.PermitSemaphore(n, o...); return err },
		"CountDownLatch":  func(n string, o ...LockOption) error { _, err := c.CountDownLatch(n, o...); return err },
	}
	for kind, make := range ctors {
		for _, name := range []string{"", strings.Repeat("x", MaxNameLen+1), "a{", "a{}b"} {
			if err := make(name); !errors.Is(err, ErrInvalidName) {
				t.Errorf("%s(%.20q): %v, want ErrInvalidName", kind, name, err)
			}
		}
		if err := make("ok", WithReleaseTimeout(-time.Second)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s with a negative release timeout: %v, want ErrInvalidArgument", kind, err)
		}
	}
	// The Mutex and the handles built on it carry the typed nil, not a
	// half-built handle.
	if m, err := c.Mutex("", WithLease(time.Second)); m != nil || err == nil {
		t.Errorf("Mutex(\"\") = %v, %v", m, err)
	}
	for _, bad := range []LockOption{WithLease(-1), WithWatchdog(time.Second, 2*time.Second),
		WithFailoverGuard(true, 0), WithFenceIdle(time.Millisecond), WithWaiterTimeout(time.Millisecond),
		WithRedissonFairQueue(-1)} {
		if _, err := c.FairMutex("ok", bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FairMutex with an invalid option: %v, want ErrInvalidArgument", err)
		}
	}
	// A SharedOption that means nothing for a kind is refused by name.
	for _, x := range []struct {
		kind string
		opt  LockOption
		name string
	}{
		{"Mutex", WithRedissonFairQueue(0), "WithRedissonFairQueue"},
		{"RWMutex", WithRedissonFairQueue(0), "WithRedissonFairQueue"},
		{"Semaphore", WithLease(time.Second), "WithLease"},
		{"CountDownLatch", WithFailoverGuard(false, 0), "WithFailoverGuard"},
		{"PermitSemaphore", WithWatchdog(time.Second, 100*time.Millisecond), "WithWatchdog"},
		{"CountDownLatch", WithReleaseTimeout(time.Second), "WithReleaseTimeout"},
	} {
		err := ctors[x.kind]("ok", x.opt)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), x.name+" does not apply") {
			t.Errorf("%s with %s: %v, want ErrInvalidArgument naming the option", x.kind, x.name, err)
		}
	}
	// The options a kind does take are accepted.
	for kind, opts := range map[string][]LockOption{
		"Mutex":           {WithLease(time.Second), WithWatchdog(time.Second, 100*time.Millisecond), WithReleaseTimeout(time.Second), WithFailoverGuard(false, 0), WithFenceIdle(time.Hour), WithWaiterTimeout(time.Second)},
		"FairMutex":       {WithLease(time.Second), WithWaiterTimeout(time.Second), WithRedissonFairQueue(0), WithFailoverGuard(true, time.Second)},
		"RWMutex":         {WithLease(time.Second), WithWaiterTimeout(time.Second), WithFenceIdle(time.Hour)},
		"Semaphore":       {WithReleaseTimeout(time.Second), WithFailoverGuard(false, 0), WithGuardReplicas(2)},
		"PermitSemaphore": {WithReleaseTimeout(time.Second), WithFailoverGuard(true, time.Second), WithGuardReplicas(GuardAllReplicas)},
		"CountDownLatch":  nil,
	} {
		if err := ctors[kind]("ok", opts...); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	// A Client default that only locks use does not stop the other kinds.
	lc := newTestClient(t, node.Client(t), WithLease(time.Second), WithWaiterTimeout(time.Second))
	if _, err := lc.Semaphore("ok"); err != nil {
		t.Errorf("Semaphore on a Client with a default lease: %v", err)
	}
	if n := dbsize(t, node); n != 0 {
		t.Errorf("constructors wrote %d keys", n)
	}
}

func TestCompositeConstructorsValidate(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	if _, err := NewRedLock("x", cs, WithWaiterTimeout(time.Second)); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "WithWaiterTimeout does not apply to a redlock") {
		t.Errorf("RedLock with WithWaiterTimeout: %v", err)
	}
	if _, err := NewRedLock("x", cs, WithLease(-1)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock with a negative lease: %v", err)
	}
	if _, err := NewRedLock("x", cs, WithClockDrift(2, 0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock with drift factor 2: %v", err)
	}
	// NaN passed the range check, and every validity came out negative: a
	// RedLock that wrote its lock on every node and never held it.
	if _, err := NewRedLock("x", cs, WithClockDrift(math.NaN(), 0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock with drift factor NaN: %v", err)
	}
	// Clients over one Redis client are one node: each would count the
	// others' grants as another owner's hold, and no quorum ever forms.
	rc := nodes[0].Client(t)
	same := []*Client{newTestClient(t, rc, sharedPrefix(t)), newTestClient(t, rc), newTestClient(t, rc)}
	if _, err := NewRedLock("x", same); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock over three Clients on one Redis client: %v", err)
	}
	// WithLease is the RedLock's lease: every node's lock expires on its own.
	r := mustRedLock(t, "x", cs, WithLease(time.Minute))
	if r.lease != time.Minute {
		t.Errorf("RedLock lease %s, want 1m", r.lease)
	}
	for i, m := range r.nodes {
		if m.cfg.lease != time.Minute {
			t.Errorf("node %d lease %s, want 1m", i, m.cfg.lease)
		}
	}
	// Clients that disagree on the default lease need one given.
	mixed := []*Client{cs[0], cs[1], newTestClient(t, nodes[2].Client(t), WithLease(time.Second))}
	if _, err := NewRedLock("x", mixed); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock over Clients with different leases: %v", err)
	}
	if _, err := NewRedLock("x", mixed, WithLease(time.Second)); err != nil {
		t.Errorf("RedLock over Clients with different leases and WithLease: %v", err)
	}
	m := mustMutex(t, cs[0], "a")
	if _, err := NewMultiLock([]Locker{m}, WithMemberWait(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("MultiLock with member wait 0: %v", err)
	}
	for i, n := range nodes {
		if k := dbsize(t, n); k != 0 {
			t.Errorf("node %d: constructors wrote %d keys", i, k)
		}
	}
}

// A renewal interval that reaches the lease less its clock-drift allowance
// renews each hold only after its loss deadline: every hold was lost at its
// first renewal. WithWatchdog refuses it, and so a lease whose default
// interval (a third of it) does, and an interval under 1ms.
func TestWatchdogIntervalWithinLossDeadline(t *testing.T) {
	t.Parallel()
	rc := redistest.Server(t).Client(t)
	for _, o := range []Option{
		WithWatchdog(time.Second, 990*time.Millisecond),
		WithWatchdog(time.Second, time.Second-lossMargin(time.Second)),
		WithWatchdog(7*time.Millisecond, 0),
		// Within the deadline, but back to back: a script per round trip
		// for every held lock.
		WithWatchdog(30*time.Second, time.Nanosecond),
		WithWatchdog(30*time.Second, time.Millisecond-1),
	} {
		c, err := New(rc, o)
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "watchdog") {
			t.Errorf("New with a renewal interval past the loss deadline: %v, want ErrInvalidArgument", err)
		}
	}
	c := newTestClient(t, rc, WithWatchdog(time.Second, 900*time.Millisecond))
	if _, err := c.Mutex("x", WithWatchdog(time.Second, 980*time.Millisecond)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Mutex with a renewal interval past the loss deadline: %v, want ErrInvalidArgument", err)
	}
}
