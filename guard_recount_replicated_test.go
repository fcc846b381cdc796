package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardRecountAfterReplicaBack: a primary counted without replicas, in a
// deployment where a count found one, is counted again a second after, not
// five: its replica, back meanwhile (as a demoted primary comes back as the
// promoted one's replica), guards the acquisitions soon after. The replica
// is stopped once back, so a guarded acquisition fails with
// ErrNotReplicated where one sent without WAIT succeeds; the first
// such failure must come well before the five seconds an unguarded count
// was kept.
func TestGuardRecountAfterReplicaBack(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "guard-recount-replicated")
	warmWith(t, m, ctx) // counted: one replica
	detachReplica(t, primary, replica)
	// The count is a minute old: the next acquisition counts before it is
	// sent, and finds no replica.
	c.guard.checked.Store(monoNanos(time.Now().Add(-time.Minute)))
	counted := time.Now()
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with the replica gone: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	replicate(t, replica, primary) // back, as a replica again
	back := time.Since(counted)
	replica.Pause()
	defer replica.Resume()
	for {
		l, err := m.Lock(ctx)
		if errors.Is(err, ErrNotReplicated) {
			t.Logf("guarded %v after the count without replicas (the replica back after %v)", time.Since(counted).Round(time.Millisecond), back.Round(time.Millisecond))
			break
		}
		if err != nil {
			t.Fatalf("Lock: %v", err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
		// The count of no replicas is kept five seconds without a
		// recount: four leave a loaded machine room for the recount a
		// second after.
		if d := time.Since(counted); d > 4*time.Second {
			t.Fatalf("acquisitions %v after a count without replicas, the replica back after %v, are still sent without WAIT", d.Round(time.Millisecond), back.Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
