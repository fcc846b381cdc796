package scriptlock

import (
	"context"
	"errors"
	"sync"
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

	var mu sync.Mutex
	frozen := false
	inFlight := map[string]bool{} // waits with an attempt sent since the freeze
	c.testHookAttempt = func(ctx context.Context, after bool) {
		mu.Lock()
		defer mu.Unlock()
		if name, ok := ctx.Value(waitNameKey{}).(string); ok && frozen && !after {
			inFlight[name] = true
		}
	}
	defer func() { c.testHookAttempt = nil }()

	res := make(map[string]chan error)
	for _, wk := range waitKinds {
		if wk.name == "CountDownLatch" {
			continue // a read: rueidis makes it again on a broken connection
		}
		wait, release := wk.setup(t, h, c, "hung-"+wk.name)
		defer release()
		ch := make(chan error, 1)
		res[wk.name] = ch
		wctx := context.WithValue(ctx, waitNameKey{}, wk.name)
		go func() { ch <- wait(wctx) }()
	}
	time.Sleep(300 * time.Millisecond) // every wait sleeps until its next attempt
	mu.Lock()
	frozen = true
	mu.Unlock()
	node.Pause()
	defer node.Resume() // before the releases above
	if !eventually(3*notifyFallback, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(inFlight) == len(res)
	}) {
		t.Fatalf("not every wait made an attempt: %v", inFlight)
	}
	time.Sleep(100 * time.Millisecond) // the last attempts are on their way
	d.closeAll()                       // the attempts fail: use of closed network connection
	time.Sleep(500 * time.Millisecond) // the waits settle their attempts, in vain: the new connection hangs
	for name, ch := range res {
		select {
		case err := <-ch:
			t.Errorf("%s: wait ended before Close with %v", name, err)
			ch <- err
		default:
		}
	}
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
