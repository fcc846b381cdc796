package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// On a Cluster under the failover guard, a watchdog round of several holds
// in one slot sends their renewals on a goroutine per slot group; a client
// wrapper's panic there reaches the round (which logs it and renews each
// hold alone), instead of crashing the process from the group's goroutine.
// The hold sharing the slot with the panicking one is still renewed.
func TestGuardedGroupPanicReachesRound(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	var logs syncBuffer
	rc := newPanickyClient(cl.Client(t), scriptNaming("{gp}a", "Do", "DoMulti", "Dedicated.DoMulti"))
	c, err := New(rc, sharedPrefix(t), WithFailoverGuard(true, 500*time.Millisecond),
		WithWatchdog(2*time.Second, 500*time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 60*time.Second)
	a, b := mustMutex(t, c, "{gp}a"), mustMutex(t, c, "{gp}b")
	if keySlot(a.Key()) != keySlot(b.Key()) {
		t.Fatalf("%s and %s are in different slots", a.Key(), b.Key())
	}
	ha, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := b.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(-1)
	time.Sleep(4 * time.Second) // past the 2 s lease: renewals carry b on
	rc.left.Store(0)
	if !strings.Contains(logs.String(), "panic recovered") {
		t.Fatalf("the renewal's panic was not logged; log:\n%s", logs.String())
	}
	if err := context.Cause(hb); err != nil {
		t.Fatalf("the hold renewed beside the panicking one ended: %v", err)
	}
	if context.Cause(ha) == nil {
		t.Fatal("the hold whose renewals all panicked is still held")
	}
	if err := b.Unlock(hb); err != nil {
		t.Fatal(err)
	}
}
