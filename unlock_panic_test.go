package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// unlockTag marks the context of the Unlock whose release call a test's
// client wrapper makes panic: renewals and other calls do not carry it.
type unlockTag struct{}

// unlockCalls picks the calls made under an Unlock context marked unlockTag.
func unlockCalls(c wrapperCall) bool { return c.ctx != nil && c.ctx.Value(unlockTag{}) != nil }

// An Unlock whose release call panics in a rueidis client wrapper ends the
// hold as a release that failed does: the panic reaches the caller, the
// lock context ends with ErrLockLost, the watchdog stops renewing, and the
// lock ends with its lease on the server unless Unlock is made again with
// the same context, which releases it. Kept, the hold was renewed for as
// long as the Client lived: a caller that recovers the panic (an HTTP
// server does) and goes on would hold the lock for ever.
func TestUnlockPanicEndsHold(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	type handle interface {
		Key() string
		Lock(context.Context) (context.Context, error)
		Unlock(context.Context) error
	}
	kinds := []struct {
		name string
		open func(*testing.T, *Client, string) handle
	}{
		{"Mutex", func(t *testing.T, c *Client, n string) handle { return mustMutex(t, c, n) }},
		{"FairMutex", func(t *testing.T, c *Client, n string) handle { return mustFair(t, c, n) }},
		{"LeanMutex", func(t *testing.T, c *Client, n string) handle { return mustLean(t, c, n) }},
		{"RWMutex", func(t *testing.T, c *Client, n string) handle { return mustRW(t, c, n) }},
		{"RWMutex-read", func(t *testing.T, c *Client, n string) handle {
			rw := mustRW(t, c, n)
			return keyedLocker{rw.RLocker(), rw.Key()}
		}},
	}
	node := redistest.Server(t)
	for _, k := range kinds {
		for _, again := range []bool{false, true} {
			name := k.name + "/lease-ends"
			if again {
				name = k.name + "/unlock-again"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				rc := newPanickyClient(node.Client(t), unlockCalls)
				c := newTestClient(t, rc, WithWatchdog(lease, 0))
				h := k.open(t, c, "unlock-panic")
				ctx := testCtx(t, 30*time.Second)
				lctx, err := h.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rc.left.Store(1)
				p := panicked(func() { _ = h.Unlock(context.WithValue(lctx, unlockTag{}, true)) })
				if p == nil {
					t.Fatal("Unlock did not pass the wrapper's panic on")
				}
				if rc.picked.Load() != 1 {
					t.Fatalf("%d calls of the Unlock went through the wrapper, want 1 (the release)", rc.picked.Load())
				}
				endsLost(t, lctx, "an Unlock whose release panicked")
				if !exists(t, node, h.Key()) {
					t.Fatal("the release panicked before anything was sent, yet the lock is gone")
				}
				if again {
					if err := h.Unlock(lctx); err != nil {
						t.Fatalf("Unlock again: %v", err)
					}
					if exists(t, node, h.Key()) {
						t.Fatal("Unlock again left the lock on the server")
					}
					return
				}
				// Not renewed: the lock ends with the lease it had.
				if !eventually(lease+2*time.Second, func() bool { return !exists(t, node, h.Key()) }) {
					t.Fatalf("the lock is still held %s after an Unlock whose release panicked (PTTL %d ms): still renewed",
						lease+2*time.Second, pttlOf(t, node, h.Key()))
				}
			})
		}
	}
}

// An Unlock whose release call ends its goroutine (runtime.Goexit, as a
// test's t.FailNow in a wrapper does) ends the hold as one that panicked.
func TestUnlockGoexitEndsHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), unlockCalls)
	rc.goexit.Store(true)
	c := newTestClient(t, rc)
	m := mustMutex(t, c, "unlock-goexit")
	lctx, err := m.Lock(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(1)
	returned := make(chan bool)
	go func() {
		defer close(returned)
		_ = m.Unlock(context.WithValue(lctx, unlockTag{}, true))
		returned <- true
	}()
	if <-returned {
		t.Fatal("Unlock returned: the wrapper did not end its goroutine")
	}
	endsLost(t, lctx, "an Unlock whose release ended its goroutine")
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again: %v", err)
	}
	if exists(t, node, m.Key()) {
		t.Fatal("Unlock again left the lock on the server")
	}
}

// A RedLock node whose release call panics in a client wrapper: its hold
// there ends as the Mutex's does (TestUnlockPanicEndsHold), so the node's
// lock is not renewed past its lease, and an Unlock again before that
// releases it, as after a node that refused its release.
func TestRedLockNodeReleasePanicEndsHold(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	for _, again := range []bool{false, true} {
		name := "lease-ends"
		if again {
			name = "unlock-again"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nodes := redistest.Servers(t, 3)
			prefix := sharedPrefix(t)
			rc := newPanickyClient(nodes[0].Client(t), scriptsThrough("Do", "DoMulti"))
			cs := []*Client{
				newTestClient(t, rc, prefix),
				newTestClient(t, nodes[1].Client(t), prefix),
				newTestClient(t, nodes[2].Client(t), prefix),
			}
			r := mustRedLock(t, "node-release-panic", cs, WithNodeTimeout(time.Second), WithWatchdog(lease, 0))
			lctx, err := r.Lock(testCtx(t, 30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			rc.left.Store(1)
			if p := panicked(func() { _ = r.Unlock(lctx) }); p == nil {
				t.Fatal("Unlock did not pass node 0's wrapper panic on")
			}
			if rc.left.Load() != 0 {
				t.Fatal("node 0's release was not made")
			}
			if h := heldOn(t, r, nodes, 0, 1, 2); !h[0] || h[1] || h[2] {
				t.Fatalf("held after the Unlock: %v, want node 0 only (its release panicked before it was sent)", h)
			}
			if again {
				if err := r.Unlock(lctx); err != nil {
					t.Fatalf("Unlock again: %v", err)
				}
				if h := heldOn(t, r, nodes, 0, 1, 2); h[0] {
					t.Fatal("Unlock again left node 0 holding the lock")
				}
				return
			}
			if !eventually(lease+2*time.Second, func() bool { return !heldOn(t, r, nodes, 0)[0] }) {
				t.Fatalf("node 0 still holds the lock %s after an Unlock whose release there panicked (PTTL %d ms): still renewed",
					lease+2*time.Second, pttlOf(t, nodes[0], r.nodes[0].Key()))
			}
		})
	}
}

// The Unlock of a re-entry (one hold of two given up) whose release call
// panics ends the hold as a nested release that failed does: both
// contexts end with ErrLockLost and the lock is not renewed past its lease.
func TestNestedUnlockPanicEndsHold(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), unlockCalls)
	c := newTestClient(t, rc, WithWatchdog(lease, 0))
	m := mustMutex(t, c, "nested-unlock-panic")
	lctx, err := m.Lock(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.Lock(lctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(1)
	if p := panicked(func() { _ = m.Unlock(context.WithValue(inner, unlockTag{}, true)) }); p == nil {
		t.Fatal("Unlock did not pass the wrapper's panic on")
	}
	endsLost(t, inner, "a nested Unlock whose release panicked")
	endsLost(t, lctx, "a nested Unlock whose release panicked")
	if !eventually(lease+2*time.Second, func() bool { return !exists(t, node, m.Key()) }) {
		t.Fatalf("the lock is still held %s after a nested Unlock whose release panicked (PTTL %d ms): still renewed",
			lease+2*time.Second, pttlOf(t, node, m.Key()))
	}
}

// keyedLocker is a Locker with its lock's key.
type keyedLocker struct {
	Locker
	key string
}

func (k keyedLocker) Key() string { return k.key }

// endsLost fails t unless the lock context ctx ends with ErrLockLost within
// a second; after says what it ends after, for the messages.
func endsLost(t *testing.T, ctx context.Context, after string) {
	t.Helper()
	select {
	case <-ctx.Done():
		if cause := context.Cause(ctx); !errors.Is(cause, ErrLockLost) {
			t.Fatalf("lock context ended with %v after %s, want ErrLockLost", cause, after)
		}
	case <-time.After(time.Second):
		t.Fatalf("the lock context did not end after %s", after)
	}
}
