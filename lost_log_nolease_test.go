package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A nested read release that leaves no lease on the server deletes the lock,
// and the outer read hold is lost: a WARN "lock lost" names it, as for any
// other loss. Unlock answered nil and the outer hold's context ended with
// ErrLockLost while the log said nothing.
func TestLostByReleaseLeavingNoLeaseIsLogged(t *testing.T) {
	t.Parallel()
	_, c, logs := newLoggedClient(t)
	ctx := testCtx(t, 30*time.Second)
	loseOuterReadByNestedRelease(t, ctx, mustRW(t, c, "rw-nolease-log"))
	if lost, logged := logs.lostLines("lock=rw-nolease-log ", "reason="); len(lost) == 0 {
		t.Errorf("no WARN \"lock lost\" naming the lock and its reason; logged: %q", logged)
	}
}

// loseOuterReadByNestedRelease takes a read hold with a 1 s lease, a nested
// one under it with a long lease, and releases the nested one once the outer
// lease key has expired: the release leaves no lease and the outer hold is
// lost. The test fails if the outer hold was not lost.
func loseOuterReadByNestedRelease(t *testing.T, ctx context.Context, rw *RWMutex) {
	t.Helper()
	// r1 must outlast the re-entry on a loaded machine, or r1's context
	// ends first and the re-entry is refused: scripts loaded, a 1 s lease.
	warm(t, rw.RLocker())
	r1, err := rw.RLockWithLease(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLockWithLease(r1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1300 * time.Millisecond) // r1's lease key has expired
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(r1), ErrLockLost) {
		t.Fatalf("the outer hold was not lost (cause %v): nothing to log", context.Cause(r1))
	}
}
