package scriptlock

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A Semaphore acquisition granted after Close began gives its permits back;
// when that cannot reach Redis, the permits (which have no lease) stay taken
// for good, and the log says so, naming them, as for any undo that failed.
func TestSemaphoreGrantDuringCloseUndoFailsLogs(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p := newProxied(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "close-lost", WithReleaseTimeout(300*time.Millisecond))
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 2, 0); err != nil || s.Release(ctx, 2) != nil {
		t.Fatalf("warm-up: %v", err) // script loaded, connection open
	}
	p.px.FreezeReplies()
	acq := make(chan error, 1)
	go func() { acq <- s.Acquire(ctx, 2) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 0 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	closed := make(chan struct{})
	go func() { _ = p.c.Close(); close(closed) }()
	time.Sleep(100 * time.Millisecond) // Close has begun and waits for the acquisition
	// Redis stops answering writes: the grant arrives, its give-back cannot.
	if err := p.node.Do(t, "CLIENT", "PAUSE", "3000", "WRITE").Error(); err != nil {
		t.Fatal(err)
	}
	p.px.Thaw()
	if err := <-acq; !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire granted after Close began: %v, want ErrClosed", err)
	}
	<-closed
	if !strings.Contains(logs.String(), "permits may be lost") || !strings.Contains(logs.String(), "permits=2") {
		t.Fatalf("no warning naming the 2 permits the closed Client could not give back; log:\n%s", logs.String())
	}
}

// The give-back of a Semaphore acquisition granted after Close began that
// Redis refuses (here INCRBY: the count set since cannot take the permits
// back without passing 2^63 - 1) is logged as refused, with Redis's error:
// it said the give-back could not reach Redis ("Redis unreachable").
func TestSemaphoreGrantDuringCloseUndoRefusedLogs(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p := newProxied(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "close-refused")
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 2, 0); err != nil || s.Release(ctx, 2) != nil {
		t.Fatalf("warm-up: %v", err) // script loaded, connection open
	}
	p.px.FreezeReplies()
	acq := make(chan error, 1)
	go func() { acq <- s.Acquire(ctx, 2) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 0 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	closed := make(chan struct{})
	go func() { _ = p.c.Close(); close(closed) }()
	time.Sleep(100 * time.Millisecond) // Close has begun and waits for the acquisition
	p.node.Do(t, "SET", s.Key(), "9223372036854775807")
	p.px.Thaw()
	if err := <-acq; !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire granted after Close began: %v, want ErrClosed", err)
	}
	<-closed
	out := logs.String()
	if !strings.Contains(out, "permits may be lost") || !strings.Contains(out, "permits=2") {
		t.Fatalf("no warning naming the 2 permits the closed Client could not give back; log:\n%s", out)
	}
	if strings.Contains(out, "unreachable") || !strings.Contains(out, "refused") || !strings.Contains(out, "overflow") {
		t.Fatalf("the warning does not say Redis refused the give-back, with its error:\n%s", out)
	}
}
