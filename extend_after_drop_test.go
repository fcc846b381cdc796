package scriptlock

import (
	"context"
	"testing"
	"time"
)

// An Extend in flight when its connection breaks is not sent again on the
// new connection once its hold has ended: an Unlock that could not reach the
// server dropped the hold meanwhile, and the lock stays only until the lease
// it had ends. The Extend (to twice that lease) is caught in a frozen connection, the Unlock fails
// and drops the hold, and the connection (with both calls) is dropped.
func TestExtendNotResentAfterHoldEnded(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t, WithReleaseTimeout(300*time.Millisecond))
			l := lc.make(t, p.c, "extend-after-drop")
			key := p.key(t, "extend-after-drop")
			warm(t, l)
			lctx, err := lc.withLease(l, testCtx(t, 10*time.Second), lease)
			if err != nil {
				t.Fatal(err)
			}
			p.px.Freeze()
			before := pttlAt(t, p, key)
			beforeAt := time.Now()
			extended := make(chan error, 1)
			go func() {
				extended <- l.(interface {
					Extend(ctx, lctx context.Context, lease time.Duration) error
				}).Extend(testCtx(t, 8*time.Second), lctx, 2*lease)
			}()
			time.Sleep(200 * time.Millisecond) // the Extend is held in the proxy
			if err := l.Unlock(lctx); err == nil {
				t.Fatal("Unlock succeeded against a frozen server")
			}
			p.px.DropAll() // the Extend and the release never reach the server
			p.px.Thaw()
			select {
			case <-extended:
			case <-time.After(10 * time.Second):
				t.Fatal("Extend did not return")
			}
			time.Sleep(500 * time.Millisecond)
			after := pttlAt(t, p, key)
			if after <= 0 {
				t.Fatalf("the lock is gone (PTTL %d): the dropped release reached the server; the test proves nothing", after)
			}
			// Left of the lease the lock had when the hold ended, with slack
			// for the round trips.
			if left := before - time.Since(beforeAt).Milliseconds() + 300; after > left {
				t.Fatalf("the lock's TTL is %d ms, past the %d ms left of its lease when its hold ended (%d ms then): an Extend ran after the owner gave the lock up", after, left, before)
			}
		})
	}
}

// An Extend whose connection breaks under it while its hold lasts is made
// again on the next connection, and succeeds.
func TestExtendSentAgainWhileHeld(t *testing.T) {
	t.Parallel()
	const lease = 10 * time.Second
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			l := lc.make(t, p.c, "extend-again")
			key := p.key(t, "extend-again")
			warm(t, l)
			lctx, err := lc.withLease(l, testCtx(t, 10*time.Second), lease)
			if err != nil {
				t.Fatal(err)
			}
			p.px.Freeze()
			extended := make(chan error, 1)
			go func() {
				extended <- l.(interface {
					Extend(ctx, lctx context.Context, lease time.Duration) error
				}).Extend(testCtx(t, 8*time.Second), lctx, 2*lease)
			}()
			time.Sleep(200 * time.Millisecond) // the Extend is held in the proxy
			p.px.DropAll()
			p.px.Thaw()
			select {
			case err := <-extended:
				if err != nil {
					t.Fatalf("Extend whose connection broke while the lock was held = %v, want it made again", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Extend did not return")
			}
			if got := pttlAt(t, p, key); got <= lease.Milliseconds() {
				t.Fatalf("PTTL after the Extend = %d ms, want past %d", got, lease.Milliseconds())
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
