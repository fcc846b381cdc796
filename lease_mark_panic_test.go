package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyClient is a rueidis client whose next script call panics, as a
// client wrapper (a hook, a middleware) may, before anything is sent.
type panickyClient struct {
	rueidis.Client
	next atomic.Bool
}

func (p *panickyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && p.next.CompareAndSwap(true, false) {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

// A re-entry of a watchdog hold whose call panics in the client (the caller
// recovers, as net/http does) ran nothing on the server. The hold must still
// be renewed as before, not be found lost once its first lease has passed.
func TestPanickingReentryKeepsRenewals(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &panickyClient{Client: node.Client(t)}
	c := newTestClient(t, rc, WithWatchdog(time.Second, 300*time.Millisecond))
	m := mustMutex(t, c, "panic-reentry")
	warm(t, m)
	ctx := testCtx(t, 20*time.Second)
	xctx := WithOwner(ctx, "x")
	outer, err := m.Lock(xctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(outer)
	func() {
		defer func() { _ = recover() }()
		rc.next.Store(true)
		_, _ = m.Lock(xctx)
		t.Fatal("the re-entry did not panic")
	}()
	time.Sleep(2500 * time.Millisecond) // past the 1 s lease: renewals carry it on
	if err := context.Cause(outer); err != nil {
		t.Fatalf("owner x's hold ended while renewals were confirmed: %v", err)
	}
}
