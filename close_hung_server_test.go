package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsWaitAgainstHungServer: the server stops answering (SIGSTOP)
// while waits' attempts are in flight, and their connection is closed under
// them: each wait settles its attempt, whose undo dials a new connection
// that the kernel accepts and the server never answers (rueidis's handshake
// is bounded only by its dial timeout, and calls waiting on that dial do not
// watch their context). Close still ends every wait, with ErrClosed, and
// returns within the bound of an undo Close waits for (one second), and of
// the subscriptions' receive loops (one more), and a margin. Waits and Close
// took about 5.5 s and more, rueidis's dial timeout.
func TestCloseEndsWaitAgainstHungServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var d closedConns
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{node.Addr}, DisableCache: true,
		PipelineMultiplex: -1, DialCtxFn: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c := newTestClient(t, rc)
	h := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)

	w := startWaitsInFlight(ctx, t, h, c, "hung-")
	res := w.res
	w.freeze(t, len(res))
	node.Pause()
	defer node.Resume() // before the holds are given back
	w.awaitAttempts(t, len(res))
	time.Sleep(100 * time.Millisecond) // the last attempts are on their way
	d.closeAll()                       // the attempts fail: use of closed network connection
	time.Sleep(500 * time.Millisecond) // the waits settle their attempts, in vain: the new connection hangs
	w.checkRunning(t)
	begun := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	// The waits: the undo's second, and a margin. Close: then the second
	// it gives the subscriptions' receive loops, and a margin.
	const waitBound, closeBound = 2500 * time.Millisecond, 3500 * time.Millisecond
	end := time.After(waitBound)
	for name, ch := range res {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: wait ended by Close returned %v, want ErrClosed", name, err)
			}
		case <-end:
			t.Errorf("%s: wait still running %v after Close", name, waitBound)
		}
	}
	select {
	case <-closed:
	case <-time.After(closeBound - time.Since(begun)):
		t.Errorf("Close still running %v after it began", closeBound)
		<-closed
	}
	t.Logf("Close returned after %v", time.Since(begun).Round(time.Millisecond))
}
