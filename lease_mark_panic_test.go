package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry of a watchdog hold whose call panics in the client (the caller
// recovers, as net/http does) ran nothing on the server. The hold must still
// be renewed as before, not be found lost once its first lease has passed.
func TestPanickingReentryKeepsRenewals(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), scriptsThrough("Do"))
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
		rc.left.Store(1)
		_, _ = m.Lock(xctx)
		t.Fatal("the re-entry did not panic")
	}()
	time.Sleep(2500 * time.Millisecond) // past the 1 s lease: renewals carry it on
	if err := context.Cause(outer); err != nil {
		t.Fatalf("owner x's hold ended while renewals were confirmed: %v", err)
	}
}
