package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A waiting Semaphore acquisition whose attempt took permits and whose
// connection then broke settles the attempt through its record before it
// waits on. When Redis stays unreachable for longer than that record lives,
// the settling finds no record and cannot tell whether the attempt took
// anything: the permits it took stay taken (they have no lease), and the
// Client logs the warning that names them, as it does when the undo runs in
// the background. The wait went on without a word.
func TestSemaphoreSettleOutlivedByOutage(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p := newProxied(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	p.c.recordTTL = time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "settle-outage")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil || s.Release(ctx, 1) != nil { // script loaded
		t.Fatalf("warm-up: %v", err)
	}
	p.px.FreezeReplies()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- s.TryAcquire(actx, 2, 15*time.Second) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 1 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	p.px.Refuse()                                    // the connection breaks under the attempt; the settling cannot reach Redis until Thaw
	time.Sleep(p.c.recordTTL + 500*time.Millisecond) // the attempt's record has expired
	p.px.Thaw()
	if !eventually(3*time.Second, func() bool { return strings.Contains(logs.String(), "permits may be lost") }) {
		t.Fatalf("no warning about the permits the settling could not give back; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "permits=2") {
		t.Errorf("the warning does not name the permits: %s", logs.String())
	}
	cancel()
	<-res
	if n := countAt(t, p.node, s.Key()); n != 1 {
		t.Errorf("count after the outage: %d, want 1 (the permits the attempt took stay taken)", n)
	}
}

// The same when Close has begun by the time the attempt fails: the undo
// Close waits for finds no record, and the Client logs the warning.
func TestSemaphoreUndoDuringCloseOutlivedByOutage(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p := newProxied(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	p.c.recordTTL = time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "close-outage")
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil || s.Release(ctx, 1) != nil { // script loaded
		t.Fatalf("warm-up: %v", err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	go func() { res <- s.TryAcquire(ctx, 2, 0) }()
	if !eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 1 }) {
		p.px.Thaw()
		t.Fatal("the acquisition did not reach the server")
	}
	time.Sleep(p.c.recordTTL + 500*time.Millisecond) // the attempt's record has expired
	closed := make(chan error, 1)
	go func() { closed <- p.c.Close() }()
	if !eventually(3*time.Second, p.c.closed) {
		t.Fatal("Close did not begin")
	}
	p.px.DropAll() // the reply is lost; the undo Close waits for reaches Redis
	p.px.Thaw()
	if err := <-res; err == nil {
		t.Fatal("TryAcquire whose reply was lost succeeded")
	}
	<-closed
	if !strings.Contains(logs.String(), "permits may be lost") {
		t.Fatalf("no warning about the permits the undo could not give back; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "permits=2") {
		t.Errorf("the warning does not name the permits: %s", logs.String())
	}
	if n := countAt(t, p.node, s.Key()); n != 1 {
		t.Errorf("count after the outage: %d, want 1 (the permits the attempt took stay taken)", n)
	}
}
