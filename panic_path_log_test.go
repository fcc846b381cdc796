package scriptlock

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panicErrors counts the panics logs holds at ERROR in what.
func panicErrors(logs *syncBuffer, what string) int {
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "panic recovered") && strings.Contains(line, what) {
			n++
		}
	}
	return n
}

// panicAgains counts the panics logs holds at DEBUG in what.
func panicAgains(logs *syncBuffer, what string) int {
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=DEBUG") && strings.Contains(line, "panic recovered again") && strings.Contains(line, what) {
			n++
		}
	}
	return n
}

func debugLogger(logs *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// The eviction-policy check, made again every minute on every node, meets
// a client wrapper whose INFO keeps panicking: the first panic is logged at
// ERROR with its stack, the later ones at DEBUG; once a check goes through
// again, the next panic is news again (ERROR). It logged an ERROR per node
// every minute for as long as the wrapper panicked.
func TestEvictionCheckPanicLoggedOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyNodes(node.Client(t), commandDo("INFO"))
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc,
		WithFailoverGuard(false, 0), WithLogger(debugLogger(&logs)))
	c.guard.evictionEvery = 100 * time.Millisecond
	m := mustMutex(t, c, "eviction-panic-once")
	ctx := testCtx(t, 20*time.Second)
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	checks := func(n int64) {
		t.Helper()
		from := c.guard.evictionChecks.Load()
		if !eventually(10*time.Second, func() bool { return c.guard.evictionChecks.Load() >= from+n }) {
			t.Fatalf("fewer than %d eviction checks", n)
		}
	}
	checks(4)
	if n := panicErrors(&logs, checkingEviction); n != 1 {
		t.Fatalf("after several checks whose INFO panicked, %d panics logged at ERROR, want 1; log:\n%s", n, logs.String())
	}
	if panicAgains(&logs, checkingEviction) == 0 {
		t.Fatalf("the later panics were not logged at DEBUG; log:\n%s", logs.String())
	}
	rc.left.Store(0)
	checks(2)
	rc.left.Store(-1)
	checks(2)
	if n := panicErrors(&logs, checkingEviction); n != 2 {
		t.Fatalf("after a check that went through and one that panicked again, %d panics logged at ERROR, want 2; log:\n%s", n, logs.String())
	}
}

// The replica count, taken again at every acquisition while none could be
// taken, meets a client wrapper whose INFO keeps panicking: the first
// panic is logged at ERROR, the later ones at DEBUG, until a count goes
// through again. It logged an ERROR at every acquisition.
func TestReplicaCountPanicLoggedOnce(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rc := newPanickyNodes(primary.Client(t), commandDo("INFO"))
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc, WithLogger(debugLogger(&logs)), loadedGuard())
	m := mustMutex(t, c, "count-panic-once")
	ctx := testCtx(t, 30*time.Second)
	lock := func() {
		t.Helper()
		l, err := m.TryLock(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		lock()
	}
	eventually(5*time.Second, func() bool {
		return panicErrors(&logs, countingReplicas)+panicAgains(&logs, countingReplicas) >= 3
	})
	if n := panicErrors(&logs, countingReplicas); n != 1 {
		t.Fatalf("after four counts whose INFO panicked, %d panics logged at ERROR, want 1; log:\n%s", n, logs.String())
	}
	if panicAgains(&logs, countingReplicas) < 2 {
		t.Fatalf("the later panics were not logged at DEBUG; log:\n%s", logs.String())
	}
	rc.left.Store(0)
	lock()
	if !eventually(5*time.Second, func() bool { return c.guard.checked.Load() != 0 }) {
		t.Fatal("no count once INFO answers")
	}
	rc.left.Store(-1)
	c.guard.checked.Store(0) // the next acquisition counts again
	lock()
	if !eventually(5*time.Second, func() bool { return panicErrors(&logs, countingReplicas) == 2 }) {
		t.Fatalf("a panic after a count that went through was not logged at ERROR; log:\n%s", logs.String())
	}
}

// A wait's subscription meets a client wrapper whose Receive keeps
// panicking: every wait subscribes again at each attempt, and only the
// first panic is logged at ERROR, the later ones at DEBUG, until a
// subscription goes through again. It logged an ERROR at every attempt.
func TestReceivePanicLoggedOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Receive" })
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix), WithLogger(debugLogger(&logs)))
	ctx := testCtx(t, 20*time.Second)
	hm, m := mustMutex(t, h, "receive-panic-once"), mustMutex(t, c, "receive-panic-once")
	hl, err := hm.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const what = "a wait's subscription"
	for range 4 {
		if _, err := m.TryLock(ctx, 200*time.Millisecond); !errors.Is(err, ErrNotAcquired) && !errors.Is(err, errCallPanicked) {
			t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired or the subscription's failure", err)
		}
	}
	eventually(5*time.Second, func() bool { return panicErrors(&logs, what)+panicAgains(&logs, what) >= 3 })
	if n := panicErrors(&logs, what); n != 1 {
		t.Fatalf("after four waits whose subscription panicked, %d panics logged at ERROR, want 1; log:\n%s", n, logs.String())
	}
	if panicAgains(&logs, what) < 2 {
		t.Fatalf("the later panics were not logged at DEBUG; log:\n%s", logs.String())
	}
	rc.left.Store(0)
	if _, err := m.TryLock(ctx, 300*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired", err)
	}
	if err := hm.Unlock(hl); err != nil {
		t.Fatal(err)
	}
	// The subscription above ends (its last waiter gone) without a panic.
	if !eventually(5*time.Second, func() bool { return c.subs.open.Load() == 0 }) {
		t.Fatal("the subscription did not end")
	}
	if hl, err = hm.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rc.left.Store(-1)
	if _, err := m.TryLock(ctx, 200*time.Millisecond); !errors.Is(err, ErrNotAcquired) && !errors.Is(err, errCallPanicked) {
		t.Fatalf("TryLock of a held lock: %v", err)
	}
	if !eventually(5*time.Second, func() bool { return panicErrors(&logs, what) == 2 }) {
		t.Fatalf("a panic after a subscription that went through was not logged at ERROR; log:\n%s", logs.String())
	}
	if err := hm.Unlock(hl); err != nil {
		t.Fatal(err)
	}
}
