package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A wait whose subscription's connection drops and is made again many
// times leaves no goroutine and no subscription behind once it ends.
func TestResubscribedManyTimesLeavesNothing(t *testing.T) {
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rawClient(t, px.Addr), prefix)
	rival := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	m, r := mustMutex(t, c, "resub"), mustMutex(t, rival, "resub")
	// Warm up: the connections rueidis opens, one wait and its subscription.
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Unlock(lctx)
	time.Sleep(1500 * time.Millisecond)
	before := len(clientGoroutines())

	for range 2 {
		rctx, err := r.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			lctx, err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(lctx)
			}
			got <- err
		}()
		for range 10 {
			time.Sleep(60 * time.Millisecond)
			px.DropAll()
		}
		if err := r.Unlock(rctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(5*time.Second, func() bool {
		c.subs.mu.Lock()
		n := len(c.subs.chans)
		c.subs.mu.Unlock()
		return n == 0 && len(clientGoroutines()) <= before
	}) {
		t.Fatalf("goroutines of the Clients: %d, %d before the waits\n%s", len(clientGoroutines()), before, strings.Join(clientGoroutines(), "\n\n"))
	}
}
