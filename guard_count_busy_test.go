package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A primary running someone's script past busy-reply-threshold answers
// INFO with BUSY, as it answers everything else. That is no count of its
// replicas: the count took it for one of none, and for the five seconds it
// was kept, acquisitions on that primary went out without WAIT once the
// script ended, although it has a replica. A BUSY INFO is no answer: the
// first acquisition is guarded, and the next count (the primary answers by
// then) counts the replica.
func TestGuardCountBusyPrimary(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	if err := primary.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	rc := primary.Client(t)
	c := newTestClient(t, rc, loadedGuard())
	ctx := testCtx(t, 20*time.Second)
	script := slowScript(t, primary, 500*time.Millisecond)
	awaitBusy(t, ctx, rc)
	// The first acquisition counts replicas while the server is busy, and
	// waits (BUSY is made again) until the script ends.
	m := mustMutex(t, c, "busy-count")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	script()
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if n := c.replicas(ctx, m.Key(), 1); n != 1 {
		t.Fatalf("replicas counted after a count the busy primary answered BUSY: %d, want 1", n)
	}
}
