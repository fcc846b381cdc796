package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardReadReleaseKeepsDeadline: with the failover guard on, the lease a
// re-entrant read release reports left (its owner's longest read lease key
// on the primary) may come from renewals no replica acknowledged: it must
// not move the hold's loss deadline past the last acknowledged one. The
// lock context ends by that deadline although re-entries are released
// meanwhile, before a promoted replica (with the old expiry) could let the
// lock go to a writer.
func TestGuardReadReleaseKeepsDeadline(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "guard-read-release")
	var lctx context.Context
	if err := acked(func() (err error) { lctx, err = rw.RLock(ctx); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.RUnlock(lctx) })
	var again []context.Context
	for range 5 {
		var r context.Context
		if err := acked(func() (err error) { r, err = rw.RLock(lctx); return err }); err != nil { // a re-entry: lctx names the owner
			t.Fatal(err)
		}
		again = append(again, r)
	}
	replica.Pause()
	defer replica.Resume()
	h := guardedHold{l: rw.RLocker(), lctx: lctx, by: lossDeadline(time.Now(), lease)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, r := range again {
			time.Sleep(lease / 4) // renewals go unacknowledged meanwhile
			if lctx.Err() != nil {
				return
			}
			_ = rw.RUnlock(r)
		}
	}()
	checkEndsBy(t, "RLock", h, "a re-entrant read release")
	<-done
}

// TestGuardReadReleaseAfterUnackedExtend: an Extend no replica acknowledged
// (ErrNotReplicated) has set the read hold's lease keys on the primary alone;
// a re-entrant read release that then reports that lease left must not move
// the hold's loss deadline to it.
func TestGuardReadReleaseAfterUnackedExtend(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease = 1500 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "guard-read-release-extend", WithLease(lease))
	lctx, err := replicatedLock(func() (context.Context, error) { return rw.RLock(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.RUnlock(lctx) })
	again, err := replicatedLock(func() (context.Context, error) { return rw.RLock(lctx) }) // a re-entry: lctx names the owner
	if err != nil {
		t.Fatal(err)
	}
	h := guardedHold{l: rw.RLocker(), lctx: lctx, by: lossDeadline(time.Now(), lease)}
	replica.Pause()
	defer replica.Resume()
	if err := rw.RLocker().(Extender).Extend(ctx, lctx, 20*time.Second); err == nil {
		t.Fatal("Extend with the only replica stopped succeeded")
	}
	if err := rw.RUnlock(again); err != nil {
		t.Fatal(err)
	}
	checkEndsBy(t, "RLock", h, "a re-entrant read release after an unacknowledged Extend")
}
