package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Close on a link so slow that the undo of a semaphore acquisition whose
// caller gave up before its reply came (the connection broken by that
// caller's deadline, so the undo waits for a new one) gets no answer within
// the second Close gives it. The permits may be lost, and the log says so,
// naming Close: it said the undo failed "while its record lived (Redis
// unreachable)", a minute of outage, when the record had a minute left and
// Redis answered.
func TestSemaphoreCloseUndoUnansweredLogged(t *testing.T) {
	t.Parallel()
	const oneWay = 600 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	var logs syncBuffer
	c := newTestClient(t, px.Client(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	s, err := c.Semaphore("sem")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil { // scripts loaded
		t.Fatal(err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	px.Delay(oneWay)
	short, cancel := context.WithTimeout(context.Background(), oneWay)
	err = s.Acquire(short, 1)
	cancel()
	if err == nil {
		t.Fatal("Acquire succeeded within a deadline shorter than its round trip")
	}
	c.Close()
	out := logs.String()
	if !strings.Contains(out, "permits may be lost") {
		// A new connection's handshake and the undo take two round
		// trips, more than the second Close gives it.
		t.Fatalf("no warning that the permits may be lost:\n%s", out)
	}
	if strings.Contains(out, "while its record lived") || !strings.Contains(out, "closed") {
		t.Fatalf("the log does not say Close cut the undo short:\n%s", out)
	}
}
