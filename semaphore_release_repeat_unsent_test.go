package scriptlock

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Release whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it fails with that dial's error, which reads as a call never
// sent (docs/guarantees.md), so a caller that believes it releases again and
// the permits count twice, for good. Its error tells the outcome is unknown.
func TestSemaphoreReleaseRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc, refuseDial := dialRefusingClient(t, px.Addr)
	c := newTestClient(t, rc, WithReleaseTimeout(3*time.Second))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "release-repeat-unsent")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.Release(ctx, 1); err != nil { // scripts loaded
		t.Fatal(err)
	}
	px.FreezeReplies()
	res := make(chan error, 1)
	go func() { res <- s.Release(ctx, 2) }()
	landed := eventually(3*time.Second, func() bool { return countAt(t, node, s.Key()) == 8 })
	refuseDial.Store(true)
	px.DropAll() // the reply is lost with its connection; every repeat's dial fails
	px.Thaw()
	rerr := <-res
	refuseDial.Store(false)
	if !landed {
		t.Fatalf("the release did not reach the server (Release = %v)", rerr)
	}
	if rerr == nil || !strings.Contains(rerr.Error(), "outcome unknown") {
		t.Fatalf("Release whose reply was lost, its repeats never sent = %v; want an error of unknown outcome", rerr)
	}
	var oe *net.OpError
	if !errors.As(rerr, &oe) {
		t.Fatalf("Release = %v; want the dial's *net.OpError through errors.As", rerr)
	}
	time.Sleep(300 * time.Millisecond) // a repeat that released again, had there been one
	if got := countAt(t, node, s.Key()); got != 8 {
		t.Fatalf("count = %d; want 8 (released once)", got)
	}
}
