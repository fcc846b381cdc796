package scriptlock

import (
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A CountDown whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran. Its repeats carry no deadline rueidis sees (they end at the
// release timeout), so rueidis's own retries end with the context's error,
// unless its retries are bounded (RetryDelay answering a negative delay):
// then it answers the dial's error, which reads as a call never sent, and a
// caller that believes it counts down twice. Its error tells the outcome is
// unknown.
func TestLatchCountDownRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	refuse := new(atomic.Bool)
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{px.Addr}, DisableCache: true, PipelineMultiplex: -1,
		DialFn: func(addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			if refuse.Load() {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout (injected)")}
			}
			return d.Dial("tcp", addr)
		},
		// Three retries a call, 10 ms apart.
		RetryDelay: func(attempts int, _ rueidis.Completed, _ error) time.Duration {
			if attempts > 3 {
				return -1
			}
			return 10 * time.Millisecond
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	r := &unsentRig{node: node, px: px, refuse: refuse, c: newTestClient(t, rc, WithReleaseTimeout(3*time.Second))}
	ctx := testCtx(t, 20*time.Second)
	l := mustLatch(t, r.c, "countdown-repeat-unsent")
	if ok, err := l.TrySetCount(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if err := l.CountDown(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	r.lose(t, false, func() bool { return countAt(t, node, l.Key()) == 3 }, func() error { return l.CountDown(ctx) })
	time.Sleep(300 * time.Millisecond) // a repeat that counted again, had there been one
	if got := countAt(t, node, l.Key()); got != 3 {
		t.Fatalf("count = %d; want 3 (counted down once)", got)
	}
}
