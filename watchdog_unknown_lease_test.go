package scriptlock

import (
	"context"
	"testing"
	"time"
)

// TestWatchdogHandOverAfterAbandonedShortExtend: an Extend of a hold taken
// with a lease fails without an answer, with a lease shorter than the
// watchdog's renewal interval; a re-entry without a lease then hands the
// hold to the watchdog. That Extend may still run after any renewal and set
// its short lease, so each renewal moves the loss deadline only that far:
// renewed at the watchdog's interval, the hold was lost after its first
// renewal though every renewal succeeded. The watchdog renews it often
// enough to keep it: the hold lasts until its Unlock.
// The leases are long enough that a renewal on a loaded machine, sent every
// third of the short lease, has over two seconds to be answered; without
// the watchdog's shorter interval the hold is lost 4 s after its hand-over,
// before the watch ends.
func TestWatchdogHandOverAfterAbandonedShortExtend(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithWatchdog(15*time.Second, 0))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, p.c, "wd-unknown-short")
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	const short = 4 * time.Second // the renewal interval is 5 s
	p.px.FreezeReplies()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = m.Extend(cctx, lctx, short)
	cancel()
	p.px.DropAll()
	p.px.Thaw()
	if err == nil {
		t.Fatal("Extend with its reply held back succeeded")
	}
	handed := time.Now()
	inner, err := m.Lock(lctx)
	if err != nil {
		t.Fatalf("re-entry without a lease: %v", err)
	}
	select {
	case <-lctx.Done():
		t.Fatalf("hold ended %s after its hand-over to the watchdog, every renewal answered: %v", time.Since(handed).Round(time.Millisecond), context.Cause(lctx))
	case <-time.After(6 * time.Second):
	}
	if err := m.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
