package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The context a release runs under keeps the caller's values, ignores the
// caller's cancellation, is bounded by the release timeout (never more, at
// least 63/64 of it), and releases beginning together share one deadline.
func TestReleaseContext(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	type key struct{}
	const timeout = 2 * time.Second
	caller, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	before := time.Now()
	r1 := c.releaseContext(caller, timeout)
	r2 := c.releaseContext(caller, timeout)
	after := time.Now()
	if r1.Err() != nil {
		t.Fatalf("release context ended with its caller's: %v", r1.Err())
	}
	if r1.Value(key{}) != "v" {
		t.Fatal("release context lost its caller's values")
	}
	// What the context package finds through Value (the cause, the parent
	// of a derived context) is the bound's, not the caller's.
	if err := context.Cause(r1); err != nil {
		t.Fatalf("release context's cause is its caller's: %v", err)
	}
	child, stop := context.WithCancel(r1)
	defer stop()
	if child.Err() != nil {
		t.Fatalf("a context derived from the release context ended with its caller's: %v", child.Err())
	}
	d, ok := r1.Deadline()
	if !ok || d.After(after.Add(timeout)) || d.Before(before.Add(timeout-timeout/64)) {
		t.Fatalf("deadline %v after the call, want within [%v, %v]", d.Sub(before), timeout-timeout/64, timeout)
	}
	if r1.Done() != r2.Done() {
		t.Fatal("releases beginning together got a timer each")
	}
	// Past a 64th of the timeout a new bound starts, so no release gets less
	// than 63/64 of it.
	time.Sleep(timeout/64 + 10*time.Millisecond)
	start := time.Now()
	r3 := c.releaseContext(caller, timeout)
	if d3, _ := r3.Deadline(); d3.Before(start.Add(timeout - timeout/64)) {
		t.Fatalf("a later release got %v, want at least %v", d3.Sub(start), timeout-timeout/64)
	}
	if r3.Done() == r1.Done() {
		t.Fatal("a release past the sharing window reused the old bound")
	}
	// Another timeout gets its own bound.
	if r4 := c.releaseContext(caller, time.Second); r4.Done() == r3.Done() {
		t.Fatal("a different release timeout shared the bound")
	}
	if !eventually(10*time.Second, func() bool { return r1.Err() != nil }) {
		t.Fatal("the bound never ended")
	}
	if r1.Err() != context.DeadlineExceeded || context.Cause(r1) != context.DeadlineExceeded {
		t.Fatalf("bound ended with %v (cause %v), want context.DeadlineExceeded", r1.Err(), context.Cause(r1))
	}
	if !eventually(time.Second, func() bool { return child.Err() != nil }) {
		t.Fatal("a context derived from the release context outlived its bound")
	}
}

// An Unlock whose server cannot be reached ends with its release timeout, and
// the error says so (errors.Is context.DeadlineExceeded) beside the transport
// failure.
func TestUnlockUnreachableReportsDeadline(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithReleaseTimeout(120*time.Millisecond))
	m := mustMutex(t, p.c, "unreachable")
	lctx, err := m.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p.px.Close() // connections dropped, new ones refused: every attempt fails at once
	start := time.Now()
	err = m.Unlock(lctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unlock with the server unreachable: %v, want an error that errors.Is context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Unlock took %s, release timeout 120ms", d)
	}
}

// The time a release reads as it begins (releaseContextAt) is when it
// began on the monotonic clock, whether it makes a new bound or shares one:
// a release that leaves holds counts its loss deadline from it.
func TestReleaseContextReadsItsStart(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	const timeout = 2 * time.Second
	for i, what := range []string{"a new bound", "a shared bound"} {
		before := monoNanos(time.Now())
		rctx, now := c.releaseContextAt(context.Background(), timeout, nil)
		after := monoNanos(time.Now())
		if now < before || now > after {
			t.Fatalf("release with %s: began at %d, outside [%d, %d] read around it", what, now, before, after)
		}
		if d, ok := rctx.Deadline(); !ok || monoNanos(d) > now+int64(timeout) || monoNanos(d) < now+int64(timeout-timeout/64) {
			t.Fatalf("release with %s: deadline %v after its start, want within [%v, %v]", what, time.Duration(monoNanos(d)-now), timeout-timeout/64, timeout)
		}
		if i == 0 && c.releaseBound.Load() == nil {
			t.Fatal("no bound made")
		}
	}
}
