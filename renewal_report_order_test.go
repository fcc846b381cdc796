package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowRenewal is an Observer whose Renewal, for a round that found a lease
// lost, waits until the test lets it go: an exporter that is slow for once.
type slowRenewal struct {
	NopObserver
	once    sync.Once
	lost    chan struct{}
	release chan struct{}
}

func (o *slowRenewal) Renewal(e RenewalEvent) {
	if e.Lost > 0 {
		o.once.Do(func() { close(o.lost) })
		<-o.release
	}
}

// A lock the watchdog finds gone has ended (its context done with
// ErrLockLost) before the Observer hears of the round: Renewal, like HoldEnd,
// is called once the engine's own work for the event is done, so a slow
// Observer does not keep its owner working under a lost lock.
func TestLostEndsBeforeRenewalReported(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &slowRenewal{lost: make(chan struct{}), release: make(chan struct{})}
	defer close(o.release)
	c := newTestClient(t, node.Client(t), WithObserver(o), WithWatchdog(3*time.Second, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "gone")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	select {
	case <-o.lost:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal round reported the lease lost within 5s")
	}
	select {
	case <-lctx.Done():
	case <-time.After(500 * time.Millisecond):
		t.Fatalf("the lock context is still live while the Observer's Renewal reports its lease lost (cause %v)", context.Cause(lctx))
	}
}

// slowHoldEnd is an Observer whose first HoldEnd of a lost hold waits until
// the test lets it go.
type slowHoldEnd struct {
	NopObserver
	once    sync.Once
	entered chan Op
	release chan struct{}
}

func (o *slowHoldEnd) HoldEnd(_ context.Context, op Op, e HoldEvent) {
	if e.Cause != EndLost {
		return
	}
	first := false
	o.once.Do(func() { first = true })
	if first {
		o.entered <- op
		<-o.release
	}
}

// Locks the watchdog finds gone in one round all end before the Observer
// hears of any: a slow HoldEnd for one does not keep the others' owners
// working under locks found lost.
func TestLostEndTogetherBeforeHoldEnd(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &slowHoldEnd{entered: make(chan Op, 1), release: make(chan struct{})}
	defer close(o.release)
	c := newTestClient(t, node.Client(t), WithObserver(o), WithWatchdog(3*time.Second, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	lctxs := map[string]context.Context{}
	var keys []string
	for _, name := range []string{"a", "b", "c"} {
		m := mustMutex(t, c, name)
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lctxs[name] = lctx
		keys = append(keys, m.Key())
	}
	node.Do(t, append([]string{"DEL"}, keys...)...)
	var first Op
	select {
	case first = <-o.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no lost hold reported within 5s")
	}
	for name, lctx := range lctxs {
		if name == first.Name {
			continue
		}
		select {
		case <-lctx.Done():
		case <-time.After(500 * time.Millisecond):
			t.Errorf("lock %s is still live while the Observer's HoldEnd for lock %s, lost in the same round, runs", name, first.Name)
		}
	}
}

// blockingHoldEnd is an Observer whose first HoldEnd of the given cause waits
// until the test lets it go.
type blockingHoldEnd struct {
	NopObserver
	cause   HoldEndCause
	once    sync.Once
	entered chan Op
	release chan struct{}
}

func (o *blockingHoldEnd) HoldEnd(_ context.Context, op Op, e HoldEvent) {
	if e.Cause != o.cause {
		return
	}
	first := false
	o.once.Do(func() { first = true })
	if first {
		o.entered <- op
		<-o.release
	}
}

// Close ends every hold before the Observer hears of any: a slow HoldEnd for
// one does not leave the others' contexts live, their leases running out
// unrenewed.
func TestCloseEndsHoldsBeforeHoldEnd(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &blockingHoldEnd{cause: EndClosed, entered: make(chan Op, 1), release: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithObserver(o))
	ctx := testCtx(t, 20*time.Second)
	lctxs := map[string]context.Context{}
	for _, name := range []string{"a", "b", "c"} {
		lctx, err := mustMutex(t, c, name).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lctxs[name] = lctx
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	var first Op
	select {
	case first = <-o.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no hold end reported within 5s of Close")
	}
	for name, lctx := range lctxs {
		if name == first.Name {
			continue
		}
		select {
		case <-lctx.Done():
		case <-time.After(500 * time.Millisecond):
			t.Errorf("lock %s is still live while the Observer's HoldEnd for lock %s, closed by the same Close, runs", name, first.Name)
		}
	}
	close(o.release)
	<-closed
}

// ForceUnlock ends every hold this Client has of the lock before the
// Observer hears of any: a slow HoldEnd for one reader does not leave the
// other readers' contexts live.
func TestForceUnlockEndsHoldsBeforeHoldEnd(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &blockingHoldEnd{cause: EndLost, entered: make(chan Op, 1), release: make(chan struct{})}
	defer close(o.release)
	c := newTestClient(t, node.Client(t), WithObserver(o))
	ctx := testCtx(t, 20*time.Second)
	rw := mustRW(t, c, "shared")
	var lctxs []context.Context
	for _, owner := range []string{"r1", "r2", "r3"} {
		lctx, err := rw.RLock(WithOwner(ctx, owner))
		if err != nil {
			t.Fatal(err)
		}
		lctxs = append(lctxs, lctx)
	}
	forced := make(chan error, 1)
	go func() { _, err := rw.ForceUnlock(ctx); forced <- err }()
	select {
	case <-o.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no hold end reported within 5s of ForceUnlock")
	}
	live := 0
	for _, lctx := range lctxs {
		select {
		case <-lctx.Done():
		case <-time.After(500 * time.Millisecond):
			live++
		}
	}
	if live > 0 {
		t.Errorf("%d read holds still live while the Observer's HoldEnd for another, force-unlocked with them, runs", live)
	}
}
