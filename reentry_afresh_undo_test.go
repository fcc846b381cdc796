package scriptlock

import (
	"testing"
	"time"
)

// A re-entry with a short lease of a hold the watchdog renews, granted
// afresh (the lock was deleted meanwhile), set the watchdog's lease on the
// server: when its own lease ends, the hold gives that longer lease back,
// and keeps trying for as long as that lease lasts, not only for its own
// (the server did not answer around its end): the lock is not left held for
// the watchdog's lease.
func TestWatchdogReentryAfreshGiveBackOutlivesItsLease(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithWatchdog(10*time.Second, 0))
	ctx := testCtx(t, 30*time.Second)
	const short = 300 * time.Millisecond
	m := mustMutex(t, p.c, "wd-afresh-giveback")
	warmShared(t, m)
	octx := WithOwner(ctx, "job")
	if _, err := m.Lock(octx); err != nil {
		t.Fatal(err)
	}
	p.node.Do(t, "DEL", m.Key())
	inner, err := m.LockWithLease(octx, short)
	if err != nil {
		t.Fatal(err)
	}
	if ttl := pttlOf(t, p.node, m.Key()); ttl <= int64(short/time.Millisecond) {
		t.Fatalf("PTTL %d ms after the fresh grant, want the watchdog's lease", ttl)
	}
	// The server does not answer from just before the hold's end until
	// well after it.
	time.Sleep(short / 2)
	p.px.FreezeReplies()
	select {
	case <-inner.Done():
	case <-time.After(2 * time.Second):
		p.px.Thaw()
		t.Fatalf("the fresh hold's context outlived its %s lease", short)
	}
	time.Sleep(short + 200*time.Millisecond)
	p.px.DropAll()
	p.px.Thaw()
	if !eventually(4*time.Second, func() bool { return !exists(t, p.node, m.Key()) }) {
		t.Fatalf("the lock is still held (PTTL %d ms) 4 s after the fresh hold's %s lease ended", pttlOf(t, p.node, m.Key()), short)
	}
}
