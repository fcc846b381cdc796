package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An acquisition of an owner shared through its context (WithOwner) whose
// grant comes back after its context ended gives the grant back and returns
// at once, also while a re-entry of another goroutine of the owner is on the
// server and not yet registered: the give-back, finding more holds on the
// server than the Client knew of, undid them as if from outside any
// acquisition, and waited for every acquisition of the owner to end, its own
// included, until the release timeout (5 s) passed. The Lock returned that
// late, and the other goroutine's Lock waited as long.
func TestExpiredGrantBesideSiblingReentryReturnsPromptly(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "expired-sibling")
	warm(t, m)
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker")
	rctx, cancelR := context.WithCancel(owner)
	defer cancelR()

	var calls atomic.Int32
	sibling := make(chan struct{}) // the sibling's re-entry is on the server
	unblock := make(chan struct{}) // the sibling's reply may register
	type result struct {
		lctx context.Context
		err  error
	}
	sib := make(chan result, 1)
	c.setGrantHook(func() {
		switch calls.Add(1) {
		case 1: // the first goroutine's fresh grant
			go func() {
				lctx, err := m.Lock(owner)
				sib <- result{lctx, err}
			}()
			<-sibling
			cancelR() // its context ends before the grant registers
		case 2: // the sibling's re-entry
			close(sibling)
			select {
			case <-unblock:
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	defer func() { c.setGrantHook(nil) }()
	start := time.Now()
	_, err := m.Lock(rctx)
	took := time.Since(start)
	close(unblock)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock: %v, want context.Canceled", err)
	}
	var r result
	select {
	case r = <-sib:
	case <-time.After(10 * time.Second):
		t.Fatal("the sibling's Lock did not return")
	}
	sibTook := time.Since(start)
	c.setGrantHook(nil)
	if r.err != nil {
		t.Fatalf("sibling Lock: %v", r.err)
	}
	if st, err := m.State(r.lctx); err != nil || st.HoldCount != 1 {
		t.Fatalf("sibling's State %+v, %v: want one hold", st, err)
	}
	if err := m.Unlock(r.lctx); err != nil {
		t.Fatal(err)
	}
	if took > 2*time.Second || sibTook > 3*time.Second {
		t.Fatalf("the Lock whose context ended returned after %s, its sibling after %s: want well under the 5 s release timeout", took.Round(time.Millisecond), sibTook.Round(time.Millisecond))
	}
}
