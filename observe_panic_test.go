package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// bomb is an Observer whose HoldEnd, Renewal or Guard panics once armed, as a
// faulty exporter might; it counts the calls.
type bomb struct {
	NopObserver
	holdEnd, renewal, guard atomic.Bool
	holdEnds, renewals      atomic.Int32
}

func (b *bomb) HoldEnd(context.Context, Op, HoldEvent) {
	b.holdEnds.Add(1)
	if b.holdEnd.Load() {
		panic("observer: HoldEnd")
	}
}

func (b *bomb) Renewal(RenewalEvent) {
	b.renewals.Add(1)
	if b.renewal.Load() {
		panic("observer: Renewal")
	}
}

func (b *bomb) Guard(GuardEvent) {
	if b.guard.Load() {
		panic("observer: Guard")
	}
}

// logSink is a slog.Handler keeping every record's message and attributes.
type logSink struct {
	mu   sync.Mutex
	logs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s *logSink) WithGroup(string) slog.Handler            { return s }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	s.mu.Lock()
	s.logs = append(s.logs, b.String())
	s.mu.Unlock()
	return nil
}

// panicLogged reports whether an ERROR record names the Observer method and
// its panic value.
func (s *logSink) panicLogged(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		if strings.HasPrefix(l, "ERROR ") && strings.Contains(l, "method="+method) && strings.Contains(l, "observer: "+method) {
			return true
		}
	}
	return false
}

func panicked(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

func (w *watchdog) scheduled() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// A HoldEnd that panics on Unlock does not reach the caller, and the hold is
// finished all the same: its context ends, its loss timer is stopped and the
// watchdog no longer renews it. The panic is logged.
func TestObserverHoldEndPanicOnUnlock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs, logs := &bomb{}, &logSink{}
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithLogger(slog.New(logs)), WithWatchdog(2*time.Second, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "holdend-unlock")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.(*lockCtx).hold
	waitFor(t, 5*time.Second, "hold handed to the watchdog", func() bool { return c.wd.scheduled() == 1 })
	h.mu.Lock()
	lt := h.loss
	h.mu.Unlock()

	obs.holdEnd.Store(true)
	if r := panicked(func() { err = m.Unlock(lctx) }); r != nil {
		t.Fatalf("Unlock panicked: %v", r)
	}
	if err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if !errors.Is(context.Cause(lctx), context.Canceled) {
		t.Errorf("lock context cause %v; want context.Canceled", context.Cause(lctx))
	}
	if n := c.wd.scheduled(); n != 0 {
		t.Errorf("watchdog still renews %d holds after the Unlock", n)
	}
	if lt == nil || lt.h.Load() == h {
		t.Errorf("loss timer still armed for the released hold")
	}
	if obs.holdEnds.Load() != 1 || !logs.panicLogged("HoldEnd") {
		t.Errorf("HoldEnd called %d times, panic logged %v; want once, logged:\n%s", obs.holdEnds.Load(), logs.panicLogged("HoldEnd"), strings.Join(logs.logs, "\n"))
	}
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Errorf("lock after Unlock: %+v, %v; want released", st, err)
	}
}

// A HoldEnd that panics does not stop Close: every hold still held ends, its
// context with cause ErrClosed.
func TestObserverHoldEndPanicDuringClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs, logs := &bomb{}, &logSink{}
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 20*time.Second)
	var lctxs []context.Context
	for i := range 3 {
		lctx, err := mustMutex(t, c, fmt.Sprintf("holdend-close-%d", i)).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lctxs = append(lctxs, lctx)
	}
	obs.holdEnd.Store(true)
	if r := panicked(func() { c.Close() }); r != nil {
		t.Errorf("Close panicked: %v", r)
	}
	for i, lctx := range lctxs {
		if !errors.Is(context.Cause(lctx), ErrClosed) {
			t.Errorf("hold %d: context cause %v; want ErrClosed", i, context.Cause(lctx))
		}
	}
	if n := obs.holdEnds.Load(); n != 3 || !logs.panicLogged("HoldEnd") {
		t.Errorf("HoldEnd called %d times, panic logged %v; want 3, logged", n, logs.panicLogged("HoldEnd"))
	}
}

// A Renewal that panics, on the watchdog's goroutine, neither crashes the
// process nor stops the watchdog: the hold stays renewed, well past its
// lease, and its context live.
func TestObserverRenewalPanic(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs, logs := &bomb{}, &logSink{}
	const lease = 500 * time.Millisecond
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithLogger(slog.New(logs)), WithWatchdog(lease, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	obs.renewal.Store(true)
	m := mustMutex(t, c, "renewal-panic")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * lease)
	if n := obs.renewals.Load(); n < 5 {
		t.Errorf("%d renewals in %s; want the watchdog to go on renewing every 100ms", n, 3*lease)
	}
	if err := context.Cause(lctx); err != nil {
		t.Fatalf("lock context ended: %v; want it renewed", err)
	}
	if !logs.panicLogged("Renewal") {
		t.Error("Renewal panic not logged")
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

// A HoldEnd that panics on the loss timer's goroutine (an explicit lease
// running out) does not crash the process; the context ends with
// ErrLockLost.
func TestObserverHoldEndPanicOnLossTimer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs, logs := &bomb{}, &logSink{}
	c := newTestClient(t, node.Client(t), WithObserver(obs), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 20*time.Second)
	obs.holdEnd.Store(true)
	lctx, err := mustMutex(t, c, "holdend-expiry").LockWithLease(ctx, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lock context did not end with its lease")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Errorf("lock context cause %v; want ErrLockLost", context.Cause(lctx))
	}
	waitFor(t, 5*time.Second, "HoldEnd panic logged", func() bool { return logs.panicLogged("HoldEnd") })
}

// A Guard that panics, in the middle of an acquisition holding a grant, does
// not reach the caller: the lock is acquired and registered, and released by
// Unlock.
func TestObserverGuardPanic(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	obs, logs := &bomb{}, &logSink{}
	c := newTestClient(t, primary.Client(t), WithObserver(obs), WithLogger(slog.New(logs)), WithFailoverGuard(true, time.Second))
	ctx := testCtx(t, 20*time.Second)
	obs.guard.Store(true)
	m := mustMutex(t, c, "guard-panic")
	var (
		lctx context.Context
		err  error
	)
	if r := panicked(func() { lctx, err = m.Lock(ctx) }); r != nil {
		t.Fatalf("Lock panicked: %v", r)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !logs.panicLogged("Guard") {
		t.Error("Guard panic not logged")
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Errorf("lock after Unlock: %+v, %v; want released", st, err)
	}
}
