package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A re-entry with a short lease by a goroutine sharing the owner, sent
// before the owner's watchdog hold was registered (its Lock's reply on its
// way), whose reply is lost: it ran on the server after that grant and set
// its short lease there. The watchdog hold must not outlive that lease
// unrenewed: either the watchdog renews it in time, or its context ends
// before another owner can take the lock.
func TestWatchdogGrantBesideShortReentryReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithWatchdog(3*time.Second, 0))
	ctx := testCtx(t, 30*time.Second)
	const short = 300 * time.Millisecond
	m := mustMutex(t, p.c, "wd-beside-short-lost")
	warmShared(t, m)
	o := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	octx := WithOwner(ctx, "job")
	var once atomic.Bool
	inner := make(chan error, 1)
	var landed time.Time
	p.c.setGrantHook(func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		// The watchdog Lock's grant is on the server, not yet here; the
		// re-entry's reply is held back, and then lost.
		p.px.FreezeReplies()
		go func() {
			actx, cancel := context.WithTimeout(octx, time.Second)
			defer cancel()
			_, err := m.TryLockWithLease(actx, 0, short)
			inner <- err
		}()
		eventually(3*time.Second, func() bool {
			v, _ := p.node.Do(t, "HVALS", m.Key()).AsStrSlice()
			return len(v) == 1 && v[0] == "2"
		})
		landed = time.Now()
	})
	outer, err := m.Lock(octx)
	p.c.setGrantHook(nil)
	if err != nil {
		p.px.Thaw()
		t.Fatal(err)
	}
	// Past the re-entry's lease on the server, before the first renewal
	// falls due (0.9 s): the lock is free to others unless renewed.
	time.Sleep(time.Until(landed.Add(short + 250*time.Millisecond)))
	other, oerr := mustMutex(t, o, "wd-beside-short-lost").TryLock(testCtx(t, 5*time.Second), 0)
	alive := outer.Err() == nil
	p.px.DropAll()
	p.px.Thaw()
	<-inner
	if oerr == nil {
		defer mustMutex(t, o, "wd-beside-short-lost").Unlock(other)
		if alive {
			t.Fatalf("another owner holds the lock while the watchdog hold's context is alive (its loss deadline is %s away)",
				time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond))
		}
	}
	_ = m.Unlock(outer)
}
