package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// One hold's renewal that takes long (its failover guard's WAIT, on a
// replica that stalled) must not hold up the renewals of the Client's other
// holds: a hold without the guard, on a short watchdog lease, was lost
// while the server that holds it answered every call at once.
func TestWatchdogStalledRenewalSparesOtherHolds(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t))
	guarded := mustMutex(t, c, "guarded", WithFailoverGuard(true, 3*time.Second), WithWatchdog(5*time.Second, 500*time.Millisecond))
	// Both renew every 500 ms, so their renewals fall due together; the
	// plain hold's lease is half the guarded renewal's WAIT: a renewal held
	// up behind that WAIT loses the hold within the watch below, where one
	// late by the scheduling delays of a loaded 2-core machine does not (a
	// 600 ms lease renewed every 200 ms was lost there).
	plain := mustMutex(t, c, "plain", WithFailoverGuard(false, 0), WithWatchdog(1500*time.Millisecond, 500*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	g, err := guarded.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Unlock(g)
	p, err := plain.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Unlock(p)
	replica.Pause()
	defer replica.Resume()
	select {
	case <-p.Done():
		t.Fatalf("a hold on a server answering at once was lost while another hold's renewal waited for a stalled replica: %v", context.Cause(p))
	case <-time.After(3 * time.Second):
	}
}
