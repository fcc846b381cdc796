package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Every error says "scriptlock:" once and names its lock once, and still
// errors.Is its sentinel.
func TestErrorTextSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	const name = "orders-7f"
	// check wants err to be sentinel, to say "scriptlock:" once and, unless
	// lock is "", to quote lock once.
	check := func(what string, err error, sentinel error, lock string) {
		t.Helper()
		if !errors.Is(err, sentinel) {
			t.Errorf("%s: %v, want errors.Is %v", what, err, sentinel)
			return
		}
		msg := err.Error()
		if n := strings.Count(msg, "scriptlock:"); n != 1 {
			t.Errorf("%s: %q says scriptlock: %d times", what, msg, n)
		}
		if n := strings.Count(msg, `"`+lock+`"`); lock != "" && n != 1 {
			t.Errorf("%s: %q names the lock %d times", what, msg, n)
		}
	}

	m := mustMutex(t, c, name)
	check("unlock not held", m.Unlock(WithOwner(ctx, "nobody")), ErrNotHeld, name)
	check("unlock without owner", m.Unlock(ctx), ErrNotHeld, name)
	hold, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.TryLock(ctx, 0)
	check("not acquired", err, ErrNotAcquired, name)
	_, err = mustFair(t, c, name).TryLock(ctx, 0)
	check("fair not acquired", err, ErrNotAcquired, name)
	_, err = mustRW(t, c, name+"-rw").TryRLock(ctx, -1)
	check("rwmutex negative wait", err, ErrInvalidArgument, name+"-rw")
	if err := m.Unlock(hold); err != nil {
		t.Fatal(err)
	}
	_, err = m.LockWithLease(ctx, 0)
	check("invalid lease", err, ErrInvalidArgument, name)
	_, err = m.TryLock(ctx, -time.Second)
	check("negative wait", err, ErrInvalidArgument, name)
	_, err = m.Lock(nil) //lint:ignore SA1012 a nil context is the bad input under test
	check("nil context", err, ErrInvalidArgument, name)
	for _, bad := range []string{"", "a{", "a}b", strings.Repeat("x", MaxNameLen+1)} {
		_, err = c.Mutex(bad)
		check("invalid name "+bad[:min(len(bad), 4)], err, ErrInvalidName, "")
	}
	_, err = c.Mutex(name, WithLease(-time.Second))
	check("invalid option", err, ErrInvalidArgument, name)
	_, err = c.Semaphore(name, WithLease(time.Second))
	check("option for another kind", err, ErrInvalidArgument, name)

	s := mustSem(t, c, name)
	check("semaphore not acquired", s.TryAcquire(ctx, 1, 0), ErrNotAcquired, name)
	p := mustPermits(t, c, name)
	_, err = p.TryAcquire(ctx, time.Second, 0)
	check("permit not acquired", err, ErrNotAcquired, name)
	check("unknown permit", p.Release(ctx, strings.Repeat("0", 32)), ErrNotHeld, name)
	check("bad permit id", p.Release(ctx, "x"), ErrInvalidArgument, name)

	ml := mustMulti(t, []Locker{m, mustMutex(t, c, name+"-2")})
	other, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ml.TryLock(ctx, 0)
	check("multilock not acquired", err, ErrNotAcquired, "")
	check("multilock unlock not held", ml.Unlock(WithOwner(ctx, "nobody")), ErrNotHeld, "")
	if err := m.Unlock(other); err != nil {
		t.Fatal(err)
	}

	l := mustLatch(t, c, name)
	closed := newTestClient(t, node.Client(t))
	cm := mustMutex(t, closed, name)
	cl := mustLatch(t, closed, name)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = cm.Lock(ctx)
	check("closed client", err, ErrClosed, name)
	check("closed client latch", cl.Await(ctx), ErrClosed, name)
	_, err = l.AwaitTimeout(ctx, -1)
	check("latch negative wait", err, ErrInvalidArgument, name)

	// A lock context's cause says it once too.
	lctx, err := m.LockWithLease(ctx, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("lock context outlived its lease")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) || strings.Count(cause.Error(), "scriptlock:") > 1 {
		t.Errorf("lost lock cause %q", cause)
	}
}

// TestLeaseWithinDriftAllowance: a lease within the clock-drift allowance
// (5ms + 2%) would end its hold as it is granted, and one under 1ms reaches
// Redis, which counts whole milliseconds, as 0 (refused, or a key deleted as
// soon as it is written): bad input, ErrInvalidArgument, nothing written.
func TestLeaseWithinDriftAllowance(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, short := range []time.Duration{500 * time.Microsecond, 5 * time.Millisecond} {
		leaseTooShort(t, node, c, ctx, short)
	}
	// Extend refuses such a lease too, and leaves the lock's lease alone.
	m := mustMutex(t, c, "drift-extend")
	lctx, err := m.LockWithLease(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, 5*time.Millisecond); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Extend(5ms): %v, want ErrInvalidArgument", err)
	}
	if pttl, err := node.Do(t, "PTTL", m.Key()).AsInt64(); err != nil || pttl < 5000 {
		t.Errorf("PTTL after the refused Extend: %d, %v; want the 10s lease", pttl, err)
	}
	// Just past the allowance is accepted.
	if _, err := mustMutex(t, c, "drift-ok").LockWithLease(ctx, 6*time.Millisecond); err != nil {
		t.Errorf("LockWithLease(6ms): %v", err)
	}
}

// TestLeaseTooLong: a lease of 2^42 ms (about 139 years) or more would
// reach a waiter's refused attempt as the flags that reply packs above the
// holder's time left (a holder not of scriptlock, a waiter ahead): bad
// input, ErrInvalidArgument, nothing written.
func TestLeaseTooLong(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	leaseTooShort(t, node, c, ctx, time.Duration(1<<42)*time.Millisecond)
	// Just below is accepted.
	if _, err := mustMutex(t, c, "long-ok").LockWithLease(ctx, MaxLease); err != nil {
		t.Errorf("LockWithLease(MaxLease): %v", err)
	}
}

// leaseTooShort checks that every way of giving a lease refuses short
// (or one too long) and writes nothing.
func leaseTooShort(t *testing.T, node *redistest.Node, c *Client, ctx context.Context, short time.Duration) {
	t.Helper()
	type leased interface {
		LockWithLease(context.Context, time.Duration) (context.Context, error)
		TryLockWithLease(context.Context, time.Duration, time.Duration) (context.Context, error)
	}
	rw := mustRW(t, c, "sub-ms-rw")
	kinds := map[string]leased{
		"Mutex":     mustMutex(t, c, "sub-ms-mutex"),
		"FairMutex": mustFair(t, c, "sub-ms-fair"),
		"LeanMutex": mustLean(t, c, "sub-ms-lean"),
		"RWMutex":   rw,
	}
	calls := map[string]func() error{
		"RWMutex.RLockWithLease": func() error { _, err := rw.RLockWithLease(ctx, short); return err },
		"RWMutex.TryRLockWithLease": func() error {
			_, err := rw.TryRLockWithLease(ctx, 0, short)
			return err
		},
	}
	for name, l := range kinds {
		calls[name+".LockWithLease"] = func() error { _, err := l.LockWithLease(ctx, short); return err }
		calls[name+".TryLockWithLease"] = func() error { _, err := l.TryLockWithLease(ctx, 0, short); return err }
	}
	for what, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s(%s): %v, want ErrInvalidArgument", what, short, err)
		}
	}
	for what, opt := range map[string]SharedOption{"WithLease": WithLease(short), "WithWatchdog": WithWatchdog(short, 0)} {
		if _, err := c.Mutex("sub-ms-opt", opt); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Mutex with %s(%s): %v, want ErrInvalidArgument", what, short, err)
		}
	}
	if n, err := node.Do(t, "DBSIZE").AsInt64(); err != nil || n != 0 {
		t.Errorf("DBSIZE after the refused calls: %d, %v; want 0", n, err)
	}
}

// ErrWrongKind marks a WRONGTYPE reply however the error around it is
// wrapped, and Extend of a hold whose name another kind of lock took marks
// it too.
func TestWrongKindWrapped(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	node.Do(t, "HSET", "wrong-kind-hash", "f", "1")
	rc := node.Client(t)
	raw := rc.Do(ctx, rc.B().Get().Key("wrong-kind-hash").Build()).Error()
	for _, err := range []error{raw, fmt.Errorf("wait ended: %w: %w", context.DeadlineExceeded, raw)} {
		if got := wrongKind(err); !errors.Is(got, ErrWrongKind) {
			t.Errorf("wrongKind(%v) = %v, want ErrWrongKind", err, got)
		}
	}
	m := mustMutex(t, c, "wrong-kind-extend")
	lctx, err := m.LockWithLease(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	node.Do(t, "SET", m.Key(), "a-lean-lock-owner", "PX", "5000")
	if err := m.Extend(ctx, lctx, 5*time.Second); !errors.Is(err, ErrWrongKind) {
		t.Errorf("Extend of a hold whose name a string lock took: %v, want ErrWrongKind", err)
	}
}
