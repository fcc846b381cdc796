package scriptlock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A DrainPermits whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed (as it times out on a loaded machine), is of unknown outcome: the
// drain ran. It failed with that dial's error, which reads as a call never
// sent, and the permits the drain took were never given back.
func TestSemaphoreDrainRepeatUnsentGivenBack(t *testing.T) {
	t.Parallel()
	r := newUnsentRig(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, r.c, "drain-repeat-unsent")
	drainReady(t, ctx, s)
	dctx := boundedCtx(t, ctx)
	err := r.lose(t, true, func() bool { return countAt(t, r.node, s.Key()) == 0 }, func() error {
		_, err := s.DrainPermits(dctx)
		return err
	})
	if !eventually(5*time.Second, func() bool { return countAt(t, r.node, s.Key()) == 5 }) {
		t.Fatalf("count = %d after a DrainPermits that failed (%v); want 5: the permits it took went back to nobody", countAt(t, r.node, s.Key()), err)
	}
	time.Sleep(300 * time.Millisecond) // a second give-back, had there been one
	if got := countAt(t, r.node, s.Key()); got != 5 {
		t.Fatalf("count = %d; want 5 (given back once)", got)
	}
}

// drainReady sets s to 5 permits, drains them once (the drain's scripts
// loaded) and gives the 5 back: 5 permits for the drain under test.
func drainReady(t *testing.T, ctx context.Context, s *Semaphore) {
	t.Helper()
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.DrainPermits(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
}

// dialRefusingClient is a rueidis client on addr whose dials fail with an
// injected dial error (a *net.OpError, as a timed-out dial's) while the
// returned flag is set. It makes a retryable call again three times, 10 ms
// apart, and then answers the dial's error, as rueidis's default retries do
// once the context's deadline is nearer than their next pause: those go on
// until then, and whether the call then answered the dial's error or the
// context's depended on which came first at the deadline.
func dialRefusingClient(t *testing.T, addr string) (rueidis.Client, *atomic.Bool) {
	t.Helper()
	refuse := new(atomic.Bool)
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{addr}, DisableCache: true, PipelineMultiplex: -1,
		DialFn: func(addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			if refuse.Load() {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout (injected)")}
			}
			return d.Dial("tcp", addr)
		},
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
	return rc, refuse
}
