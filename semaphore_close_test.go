package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// pauseServer holds every client's commands on node for d (CLIENT PAUSE), so
// a call sent now is answered only after d.
func pauseServer(t *testing.T, ctx context.Context, node *redistest.Node, d time.Duration) {
	t.Helper()
	p := node.Client(t)
	if err := p.Do(ctx, p.B().ClientPause().Timeout(d.Milliseconds()).All().Build()).Error(); err != nil {
		t.Fatal(err)
	}
}

// A Semaphore or PermitSemaphore acquisition granted after Close began gives
// its permits back and fails with ErrClosed: the closed Client could never
// release them (a Semaphore's permits would be gone for good).
func TestSemaphoreGrantDuringClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 10*time.Second)
	t.Run("Semaphore", func(t *testing.T) {
		a := newTestClient(t, node.Client(t), prefix)
		sa, sb := mustSem(t, a, "s"), mustSem(t, newTestClient(t, node.Client(t), prefix), "s")
		if _, err := sa.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		pauseServer(t, ctx, node, 700*time.Millisecond)
		acq := make(chan error, 1)
		go func() { acq <- sa.Acquire(ctx, 1) }()
		time.Sleep(150 * time.Millisecond) // the attempt waits on the paused server
		closed := make(chan struct{})
		go func() { _ = a.Close(); close(closed) }()
		err := <-acq
		<-closed
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire granted after Close began: %v, want ErrClosed", err)
		}
		if n, err := sb.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("permits available afterwards: %d, %v; want 1 (given back)", n, err)
		}
	})
	t.Run("PermitSemaphore", func(t *testing.T) {
		a := newTestClient(t, node.Client(t), prefix)
		sa, sb := mustPermits(t, a, "p"), mustPermits(t, newTestClient(t, node.Client(t), prefix), "p")
		if _, err := sa.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		pauseServer(t, ctx, node, 700*time.Millisecond)
		acq := make(chan error, 1)
		go func() { _, err := sa.Acquire(ctx, time.Hour); acq <- err }()
		time.Sleep(150 * time.Millisecond)
		closed := make(chan struct{})
		go func() { _ = a.Close(); close(closed) }()
		err := <-acq
		<-closed
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire granted after Close began: %v, want ErrClosed", err)
		}
		if st, err := sb.State(ctx); err != nil || st.Available != 1 || st.Held != 0 {
			t.Fatalf("state afterwards: %+v, %v; want 1 available, 0 held", st, err)
		}
	})
}

// An attempt of unknown outcome (its context ended while the server held it)
// is undone even when Close has begun and runs no more background work.
func TestSemaphoreUndoDuringClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	sa, sb := mustSem(t, a, "s"), mustSem(t, newTestClient(t, node.Client(t), prefix), "s")
	if _, err := sa.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Load the script: the attempt below is one EVALSHA.
	if err := sa.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sa.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	pauseServer(t, ctx, node, 700*time.Millisecond)
	// A cancel without a deadline: the call returns at once and keeps its
	// connection, so the attempt still runs when the pause ends.
	actx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(400*time.Millisecond, cancel)
	acq := make(chan error, 1)
	go func() { acq <- sa.Acquire(actx, 1) }()
	time.Sleep(150 * time.Millisecond)
	closed := make(chan struct{})
	go func() { _ = a.Close(); close(closed) }()
	err := <-acq
	<-closed
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire: %v, want its context's end", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, err := sb.AvailablePermits(ctx)
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("permits available after the pause: %d, %v; want 1 (the attempt undone)", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Counts the scripts could not compare exactly (Lua numbers are doubles) are
// refused before anything is written.
func TestSemaphoreCountTooLarge(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	s, p := mustSem(t, c, "big"), mustPermits(t, c, "bigp")
	const n = 1 << 53
	_, err := s.TrySetPermits(ctx, n)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s(%d) = %v, want ErrInvalidArgument", what, int64(n), err)
		}
	}
	check("Semaphore.TrySetPermits", err)
	check("Semaphore.TryAcquire", s.TryAcquire(ctx, n, 0))
	_, err = s.AddPermits(ctx, n)
	check("Semaphore.AddPermits", err)
	_, err = s.AddPermits(ctx, -n)
	check("Semaphore.AddPermits(-)", err)
	_, err = p.TrySetPermits(ctx, n)
	check("PermitSemaphore.TrySetPermits", err)
	_, err = p.AddPermits(ctx, n)
	check("PermitSemaphore.AddPermits", err)
	_, err = mustLatch(t, c, "bigl").TrySetCount(ctx, n)
	check("CountDownLatch.TrySetCount", err)
	if keys := dbsize(t, node); keys != 0 {
		t.Fatalf("refused calls wrote %d keys", keys)
	}
	if v, err := s.AddPermits(ctx, n-1); err != nil || v != n-1 {
		t.Fatalf("AddPermits(2^53-1) = %d, %v", v, err)
	}
	if v, err := s.AvailablePermits(ctx); err != nil || v != n-1 {
		t.Fatalf("AvailablePermits = %d, %v; want 2^53-1", v, err)
	}
}

// What a worker holds can still be given back after the Client is closed:
// Close does not close the rueidis client, and a Semaphore's permits have no
// lease, so a Release refused at shutdown lost them for good. The same for a
// PermitSemaphore's permit (held until its lease ran out) and a CountDown
// (the waiters never released).
func TestGiveBackAfterClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 10*time.Second)
	a := newTestClient(t, node.Client(t), prefix)
	b := newTestClient(t, node.Client(t), prefix)
	sa, sb := mustSem(t, a, "s"), mustSem(t, b, "s")
	pa, pb := mustPermits(t, a, "p"), mustPermits(t, b, "p")
	la, lb := mustLatch(t, a, "l"), mustLatch(t, b, "l")
	if _, err := sa.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := pa.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := la.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sa.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	id, err := pa.Acquire(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sa.Release(ctx, 2); err != nil {
		t.Errorf("Semaphore.Release after Close: %v", err)
	}
	if err := pa.Release(ctx, id); err != nil {
		t.Errorf("PermitSemaphore.Release after Close: %v", err)
	}
	if err := la.CountDown(ctx); err != nil {
		t.Errorf("CountDown after Close: %v", err)
	}
	if n, err := sb.AvailablePermits(ctx); err != nil || n != 2 {
		t.Errorf("Semaphore permits afterwards: %d, %v; want 2", n, err)
	}
	if n, err := pb.AvailablePermits(ctx); err != nil || n != 1 {
		t.Errorf("PermitSemaphore permits afterwards: %d, %v; want 1", n, err)
	}
	if n, err := lb.Count(ctx); err != nil || n != 0 {
		t.Errorf("latch count afterwards: %d, %v; want 0", n, err)
	}
	// Taking still fails.
	if err := sa.TryAcquire(ctx, 1, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("TryAcquire after Close: %v, want ErrClosed", err)
	}
}

// A Semaphore acquisition whose reply is lost is undone through its record,
// which lives recordTTL. When Redis stays unreachable for longer, nothing on
// the server says any more whether the attempt took permits, and those it
// took cannot be given back: the Client logs a warning naming the semaphore
// and the permits, so that they can be added back (AddPermits), rather than
// losing them silently.
func TestSemaphoreUndoOutlivedByOutage(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p := newProxied(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	p.c.recordTTL = time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "outage")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil { // script loaded
		t.Fatal(err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	go func() { res <- s.TryAcquire(ctx, 2, 0) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 1 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	p.px.Refuse() // the reply is lost, and the undo cannot reach Redis until Thaw
	if err := <-res; err == nil {
		t.Fatal("TryAcquire whose reply was lost succeeded")
	}
	time.Sleep(p.c.recordTTL + 500*time.Millisecond) // the record has expired
	p.px.Thaw()
	if !eventually(3*time.Second, func() bool { return strings.Contains(logs.String(), "permits may be lost") }) {
		t.Fatalf("no warning about the permits the undo could not give back; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "permits=2") {
		t.Errorf("the warning does not name the permits: %s", logs.String())
	}
	if n := countAt(t, p.node, s.Key()); n != 1 {
		t.Errorf("count after the outage: %d, want 1 (the permits the attempt took stay taken)", n)
	}
}

// The undo of a Semaphore acquisition of unknown outcome that Close waits
// for is bounded by a second, as a lock's and a permit's are: with Redis
// unreachable it can only fail, and Close waited the whole release timeout
// for it.
func TestSemaphoreUndoDuringCloseBounded(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "close-bound")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 1, 0); err != nil || s.Release(ctx, 1) != nil {
		t.Fatalf("warm-up: %v", err) // script loaded, connection open
	}
	p.px.Freeze()
	defer p.px.Thaw()
	actx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acq := make(chan error, 1)
	go func() { acq <- s.Acquire(actx, 1) }()
	time.Sleep(150 * time.Millisecond) // the attempt is on the frozen connection
	closed := make(chan struct{})
	start := time.Now()
	go func() { _ = p.c.Close(); close(closed) }()
	time.Sleep(100 * time.Millisecond) // Close waits for the acquisition
	cancel()
	<-acq
	<-closed
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with Redis unreachable; want about a second (release timeout %s)", d, p.c.cfg.releaseTimeout)
	}
}
