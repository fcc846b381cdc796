package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An undo of an acquisition that waits for another acquisition of the owner
// (awaitAcquiring, own) and is let go at its bound (callBounded) may end its
// wait only after both acquisitions were uncounted. The count of the
// owner's acquisitions in flight must come back to nothing: one left too
// high kept every later re-entry of the owner waiting in grant for an
// acquisition that did not exist (TestLeaseProbe hung with two of them).
func TestLetGoUndoLeavesCountRight(t *testing.T) {
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 10*time.Second)
	id := holdID("k", "f")
	for round := range 20 {
		doneSelf, err := c.sharedAcquire(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		doneOther, err := c.sharedAcquire(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		uctx, cancel := context.WithCancel(ctx)
		undone := make(chan struct{})
		go func() {
			defer close(undone)
			c.awaitAcquiring(uctx, id, true) // waits for the other
		}()
		time.Sleep(20 * time.Millisecond) // the undo waits by now, as a rule
		// Both acquisitions end, the undo's own first (it was let go), before
		// the undo's goroutine runs again.
		doneOther()
		doneSelf()
		cancel()
		<-undone
		c.mu.Lock()
		n, x := len(c.acquiring), len(c.excluding)
		c.mu.Unlock()
		if n != 0 || x != 0 {
			t.Fatalf("round %d: %d acquiring and %d excluding entries left once every acquisition of the owner ended", round, n, x)
		}
	}
}

// A re-entry of a hold this Client does not know of waits in grant for the
// owner's other acquisition in flight to register its grant, and at most
// until its own context ends: then it gives the grant back as an orphan and
// Lock returns the context's error, within the release timeout the undo
// takes, however long the other acquisition stays in flight.
func TestGrantWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithReleaseTimeout(500*time.Millisecond))
	for _, kind := range []string{"Mutex", "LeanMutex"} {
		t.Run(kind, func(t *testing.T) {
			var p primitive
			var lock func(context.Context) (context.Context, error)
			name := "grant-wait-" + kind
			if kind == "Mutex" {
				m := mustMutex(t, c, name)
				p, lock = m, m.Lock
			} else {
				l := mustLean(t, c, name)
				p, lock = l, l.Lock
			}
			const owner = "shared"
			field := c.fieldOf(p, owner)
			key := p.spec().key
			// The owner holds the lock on the server, unknown to the Client
			// (a grant whose reply has not come back yet).
			if kind == "Mutex" {
				node.Do(t, "HSET", key, field, "1")
				node.Do(t, "PEXPIRE", key, "10000")
			} else {
				node.Do(t, "SET", key, field, "PX", "10000")
			}
			// The acquisition that got it, still in flight.
			base := testCtx(t, 10*time.Second)
			uncount, err := c.sharedAcquire(base, holdID(key, field))
			if err != nil {
				t.Fatal(err)
			}
			done := sync.OnceFunc(uncount)
			defer done()
			ctx, cancel := context.WithTimeout(WithOwner(base, owner), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			res := make(chan error, 1)
			go func() {
				lctx, err := lock(ctx)
				if err == nil {
					_ = p.(Locker).Unlock(lctx)
				}
				res <- err
			}()
			select {
			case err := <-res:
				if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Lock after %s: %v, want its context's deadline", took, err)
				}
			case <-time.After(3 * time.Second):
				done() // lets the waiting Lock go, so the test ends
				<-res
				t.Fatal("Lock still waiting 3 s after it began (its context ended after 300ms)")
			}
		})
	}
}
