package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// underPanicNil sets GODEBUG=panicnil=1 for t, where recover returns nil
// for a panic(nil). Not parallel: GODEBUG is the process's.
func underPanicNil(t *testing.T) {
	t.Setenv("GODEBUG", "panicnil=1")
	if panicked(func() { panic(nil) }) != nil {
		t.Fatal("GODEBUG=panicnil=1 not in force")
	}
}

// returns reports whether f returned, rather than panicked (even with nil).
func returns(f func()) (returned bool) {
	defer func() { _ = recover() }()
	f()
	return true
}

// nilAcquireEnd is an Observer whose AcquireEnd panics with nil once armed.
type nilAcquireEnd struct {
	NopObserver
	armed atomic.Bool
}

func (o *nilAcquireEnd) AcquireEnd(context.Context, Op, AcquireEvent) {
	if o.armed.Load() {
		panic(nil)
	}
}

// TestObserverAcquireEndPanicNil: under GODEBUG=panicnil=1 an Observer's
// AcquireEnd that panics with nil after a grant has the grant given back and
// its panic go on to the caller, as any other panic does.
func TestObserverAcquireEndPanicNil(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	obs := &nilAcquireEnd{}
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithWatchdog(2*time.Second, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "acquireend-nil")
	obs.armed.Store(true)
	var lctx context.Context
	var err error
	if returns(func() { lctx, err = m.Lock(ctx) }) {
		t.Errorf("Lock whose AcquireEnd panicked with nil returned %v, %v; want the panic to go on", lctx, err)
	}
	obs.armed.Store(false)
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Errorf("lock after a Lock whose AcquireEnd panicked: %+v, %v; want given back", st, err)
	}
}

// TestCuttablePanicNil: under GODEBUG=panicnil=1 a call run on a goroutine
// of its own (a client wrapper's, cut off by Close or bounded) that panics
// with nil has its panic go on on the caller's goroutine, as an uncut call's
// does, and is not taken for a call that returned its zero value (an error
// nil: a call that went through).
func TestCuttablePanicNil(t *testing.T) {
	underPanicNil(t)
	var got error
	if returns(func() {
		got = cuttable(context.Background(), nil, "a call", func() error { panic(nil) }, func(err error) error { return err })
	}) {
		t.Errorf("cuttable of a call that panicked with nil returned %v; want the panic to go on", got)
	}
}

// TestSettleUndoPanicNil: under GODEBUG=panicnil=1 an undo of an attempt of
// unknown outcome that panics with nil (a client wrapper's) has the
// background undo take it over before its panic goes on, as any other
// panic does: what the attempt may have taken (a Semaphore's permits, which
// have no lease) is given back.
func TestSettleUndoPanicNil(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	var later atomic.Bool
	var settled bool
	var err error
	if returns(func() {
		settled, err = c.settleWith(context.Background(), time.Second, time.Time{}, func(context.Context) error { panic(nil) }, func() { later.Store(true) })
	}) {
		t.Errorf("settle whose undo panicked with nil returned %v, %v; want the panic to go on", settled, err)
	}
	if !later.Load() {
		t.Error("undo that panicked with nil not taken over by the background undo")
	}
}

// nilReleaseStart is an Observer whose ReleaseStart panics with nil once
// armed.
type nilReleaseStart struct {
	NopObserver
	armed atomic.Bool
}

func (o *nilReleaseStart) ReleaseStart(ctx context.Context, _ Op) context.Context {
	if o.armed.Load() {
		panic(nil)
	}
	return ctx
}

// TestMultiLockUnlockPanicNil: under GODEBUG=panicnil=1 a member's Unlock
// that panics with nil (an Observer's ReleaseStart, that release done) has
// its panic reach MultiLock.Unlock's caller once every member's release has
// run, as any other panic does, instead of being taken for a release that
// went through.
func TestMultiLockUnlockPanicNil(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	obs := &nilReleaseStart{}
	plain := newTestClient(t, node.Client(t))
	observed := newTestClient(t, node.Client(t), WithObserver(obs))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, plain, "a"), mustMutex(t, observed, "b")
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obs.armed.Store(true)
	if returns(func() { err = ml.Unlock(lctx) }) {
		t.Errorf("MultiLock.Unlock whose member's Unlock panicked with nil returned %v; want the panic to go on", err)
	}
	obs.armed.Store(false)
	for _, m := range []*Mutex{a, b} {
		if st, err := m.State(ctx); err != nil || st.Locked {
			t.Errorf("member %s after the Unlock: %+v, %v; want released", m.Name(), st, err)
		}
	}
}

// TestCountReplicasPanicNil: under GODEBUG=panicnil=1 a node's INFO that
// panics with nil (a client wrapper's) is a node that failed to answer, as
// any other panic is: the failover guard's replica count goes on at once
// instead of waiting for an answer that never comes until its context ends.
func TestCountReplicasPanicNil(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	rc := newPanickyNodes(node.Client(t), func(c wrapperCall) bool { return c.method == "Do" && len(c.args) > 0 && c.args[0] == "INFO" })
	rc.nilValue.Store(true)
	c := newTestClient(t, rc)
	rc.left.Store(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	c.countReplicasFor(ctx, "", nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("replica count whose INFO panicked with nil took %v; want it to go on at once", d)
	}
}

// TestUndoLaterPanicNil: under GODEBUG=panicnil=1 a background undo that
// panics with nil (a client wrapper's) is an undo that failed, made again,
// as after any other panic, and not one that went through: what it was to
// give back would stay taken until its lease ended, a Semaphore's permits
// for good.
func TestUndoLaterPanicNil(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	var calls atomic.Int32
	ok := c.undoUntil(time.Now().Add(10*time.Second), time.Second, func(context.Context) error {
		if calls.Add(1) == 1 {
			panic(nil)
		}
		return nil
	})
	if n := calls.Load(); !ok || n != 2 {
		t.Errorf("undo that panicked with nil once: done %v after %d calls; want done after 2", ok, n)
	}
}

// nilHoldEnd is an Observer whose HoldEnd panics with nil once armed.
type nilHoldEnd struct {
	NopObserver
	armed atomic.Bool
}

func (o *nilHoldEnd) HoldEnd(context.Context, Op, HoldEvent) {
	if o.armed.Load() {
		panic(nil)
	}
}

// TestObserverHoldEndPanicNilLogged: under GODEBUG=panicnil=1 an Observer's
// HoldEnd that panics with nil is logged, as any other panic of it is
// (docs/operations.md), not dropped unsaid.
func TestObserverHoldEndPanicNilLogged(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	obs, logs := &nilHoldEnd{}, &logSink{}
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "holdend-nil")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obs.armed.Store(true)
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "ERROR Observer panicked") && strings.Contains(l, "method=HoldEnd") {
			return
		}
	}
	t.Errorf("HoldEnd's panic(nil) not logged; log:\n%s", strings.Join(logs.logs, "\n"))
}

// TestBackgroundLeavePanicNilLogged: under GODEBUG=panicnil=1 a wait's
// background leave of its line that panics with nil (a client wrapper's) is
// logged, as any other panic of it is.
func TestBackgroundLeavePanicNilLogged(t *testing.T) {
	underPanicNil(t)
	node := redistest.Server(t)
	cmd, err := generated.FairCancelCommand(node.Client(t), "k", "q", "t", "w", "o", "publish", false)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	h := newTestClient(t, node.Client(t))
	rc := newPanickyClient(node.Client(t), scriptRuns(cmd.Commands()[1]))
	rc.nilValue.Store(true)
	rc.left.Store(-1)
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	hl, l := mustFair(t, h, "leave-panic-nil"), mustFair(t, c, "leave-panic-nil")
	held, err := hl.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hl.Unlock(held) }()
	if _, err := l.TryLock(ctx, 300*time.Millisecond); err == nil {
		t.Fatal("TryLock took a held lock")
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the leave's panic(nil) was not logged; log:\n%s", logs.String())
	}
}
