package scriptlock

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Delete whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it fails with that dial's error, which reads as a call never
// sent, so a caller that believes it deletes again, and deletes the count
// someone set since. Its error tells the outcome is unknown.
func TestSemaphoreDeleteRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc, refuseDial := dialRefusingClient(t, px.Addr)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "delete-repeat-unsent")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.Delete(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	if _, err := s.AddPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	c.testReserved = px.FreezeReplies
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	res := make(chan error, 1)
	go func() { _, err := s.Delete(dctx); res <- err }()
	landed := eventually(3*time.Second, func() bool {
		n, err := node.Do(t, "EXISTS", s.Key()).AsInt64()
		return err == nil && n == 0
	})
	c.testReserved = nil
	refuseDial.Store(true)
	px.DropAll() // the reply is lost with its connection; every repeat's dial fails
	px.Thaw()
	rerr := <-res
	refuseDial.Store(false)
	if !landed {
		t.Fatalf("the delete did not reach the server (Delete = %v)", rerr)
	}
	if rerr == nil || !strings.Contains(rerr.Error(), "outcome unknown") {
		t.Fatalf("Delete whose reply was lost, its repeats never sent = %v; want an error of unknown outcome", rerr)
	}
	var oe *net.OpError
	if !errors.As(rerr, &oe) {
		t.Fatalf("Delete = %v; want the dial's *net.OpError through errors.As", rerr)
	}
}
