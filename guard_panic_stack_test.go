package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// firstLine is the first line of log that holds s ("" when none does).
func firstLine(log, s string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// On a Cluster under the failover guard, a client wrapper's panic in a
// watchdog round's guarded renewals, sent on a goroutine per slot group
// (and there on one of its own, which a stalled node may be let go on), is
// logged with the stack of the wrapper's panic, which names it: not only
// the round's, where it was carried to.
func TestGuardedRenewalPanicStackNamesWrapper(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	var logs syncBuffer
	rc := newPanickyClient(cl.Client(t), scriptNaming("{gs}a", "Do", "DoMulti", "Dedicated.DoMulti"))
	c, err := New(rc, sharedPrefix(t), WithFailoverGuard(true, 500*time.Millisecond),
		WithWatchdog(2*time.Second, 500*time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 60*time.Second)
	// Two holds in one slot: their renewals go out in a slot group.
	a, b := mustMutex(t, c, "{gs}a"), mustMutex(t, c, "{gs}b")
	ha, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := b.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(1)
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the renewal's panic was not logged; log:\n%s", logs.String())
	}
	if first := firstLine(logs.String(), "panic recovered"); !strings.Contains(first, "panickyDedicated.DoMulti") {
		t.Fatalf("the renewal's panic was logged without the wrapper's frames in its stack:\n%s", first)
	}
	if err := a.Unlock(ha); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(hb); err != nil {
		t.Fatal(err)
	}
}
