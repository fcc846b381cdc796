package scriptlock

import (
	"testing"
	"time"
)

// A re-entry with a longer lease, then its Unlock, whose reply is slow: the
// release sets the lock's expiry back to the hold's own shorter lease as soon
// as the script runs, so the loss deadline must move before the call is sent,
// not when its reply arrives (Mutex, FairMutex, RWMutex write holds).
func TestReentrantUnlockSlowReplyShortensLoss(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if !lc.reentrant() || lc.name == "RWMutexRead" {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			p := newProxied(t)
			l := lc.make(t, p.c, "unlock-slow-reply")
			other := lc.make(t, newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix)), "unlock-slow-reply")
			ctx := testCtx(t, 20*time.Second)
			// Long enough for the re-entry below on a loaded machine (a
			// re-entry made once it ran out finds the owner's context ended).
			const short = time.Second
			// The scripts loaded: the first re-entrant Unlock is answered.
			// Leases a loaded machine's first calls do not outlast.
			w, err := lc.withLease(l, ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			w2, err := lc.withLease(l, w, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(w2); err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(w); err != nil {
				t.Fatal(err)
			}
			o, err := lc.withLease(l, ctx, short)
			if err != nil {
				t.Fatal(err)
			}
			in, err := lc.withLease(l, o, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			p.px.FreezeReplies()
			done := make(chan error, 1)
			go func() { done <- l.Unlock(in) }()
			time.Sleep(short + 600*time.Millisecond)
			octx, oerr := other.TryLock(testCtx(t, 5*time.Second), 0)
			alive := o.Err() == nil
			p.px.Thaw()
			<-done
			if oerr == nil {
				defer other.Unlock(octx)
				if alive {
					t.Fatal("another owner holds the lock while the owner's context is alive: the re-entrant Unlock's slow reply left the loss deadline past the lease it set")
				}
			}
		})
	}
}
