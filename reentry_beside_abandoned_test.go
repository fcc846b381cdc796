package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestReentryBesideAbandonedLease: a re-entry with a short lease by a
// goroutine sharing the owner, sent before the owner's hold (taken with a
// long lease) was registered, fails without an answer. Its script may still
// run on the server at any time, after later calls of that hold: a later
// Extend with a longer lease, run first, must not move the hold's loss
// deadline past the re-entry's lease from the Extend's sending, as for a
// re-entry of unknown outcome sent once the hold was registered.
func TestReentryBesideAbandonedLease(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 30*time.Second)
	const short = 2 * time.Second
	m := mustMutex(t, p.c, "beside-abandoned")
	warmShared(t, m)
	octx := WithOwner(ctx, "job")
	var once atomic.Bool
	inner := make(chan error, 1)
	p.c.setGrantHook(func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		// The Lock's grant is on the server, not yet here; the re-entry's
		// reply is held back, and it is let go at its context's end.
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
	})
	outer, err := m.LockWithLease(octx, time.Minute)
	p.c.setGrantHook(nil)
	if err != nil {
		p.px.Thaw()
		t.Fatal(err)
	}
	if err := <-inner; err == nil {
		t.Fatal("re-entry with its reply held back succeeded")
	}
	p.px.DropAll()
	p.px.Thaw()
	if err := m.Extend(ctx, outer, time.Minute); err != nil {
		t.Fatal(err)
	}
	sent := time.Now() // the Extend was sent before
	lossAt := monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
	if bound := lossDeadline(sent, short); lossAt.After(bound) {
		t.Fatalf("loss deadline %s past the re-entry's lease from the Extend's sending: should the re-entry run last, the hold outlives the lock", lossAt.Sub(bound).Round(time.Millisecond))
	}
	_ = m.Unlock(outer)
}
