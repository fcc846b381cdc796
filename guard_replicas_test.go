package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// guardKindKey is the key a guard kind's Lock writes.
func guardKindKey(l Locker) string {
	switch l := l.(type) {
	case *Mutex:
		return l.Key()
	case *FairMutex:
		return l.Key()
	case *LeanMutex:
		return l.Key()
	case *RWMutex:
		return l.Key()
	case readLocker:
		return l.rw.Key()
	}
	panic(fmt.Sprintf("no lock key for %T", l))
}

// checkNotReplicated fails unless every Lock of ls fails with
// ErrNotReplicated and leaves no lock key on primary.
func checkNotReplicated(t *testing.T, ctx context.Context, primary *redistest.Node, ls map[string]Locker, what string) {
	t.Helper()
	for k, l := range ls {
		lctx, err := l.Lock(ctx)
		if !errors.Is(err, ErrNotReplicated) {
			if err == nil {
				_ = l.Unlock(lctx)
			}
			t.Errorf("%s: Lock %s: %v, want ErrNotReplicated", k, what, err)
		}
		if n, err := primary.Do(t, "EXISTS", guardKindKey(l)).AsInt64(); err != nil || n != 0 {
			t.Errorf("%s: lock key %s after the undone acquisition: EXISTS = %d, %v; want 0", k, guardKindKey(l), n, err)
		}
	}
}

// lockUnlockAll fails unless every Lock of ls succeeds (the replica a moment
// ago resumed may take a few tries to catch up, as for a caller).
func lockUnlockAll(t *testing.T, ctx context.Context, ls map[string]Locker, what string) {
	t.Helper()
	for k, l := range ls {
		lctx, err := l.Lock(ctx)
		for range 5 {
			if !errors.Is(err, ErrNotReplicated) {
				break
			}
			lctx, err = l.Lock(ctx)
		}
		if err != nil {
			t.Errorf("%s: Lock %s: %v", k, what, err)
			continue
		}
		if err := l.Unlock(lctx); err != nil {
			t.Errorf("%s: Unlock %s: %v", k, what, err)
		}
	}
}

// TestGuardReplicasDefault: by default the guard waits for one replica, so a
// primary with one of its two replicas stopped still grants locks.
func TestGuardReplicasDefault(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	ls := guardKinds(t, c, "guard-replicas-default")
	replicas[0].Pause()
	defer replicas[0].Resume()
	lockUnlockAll(t, ctx, ls, "with one of two replicas stopped")
}

// TestGuardAllReplicas: with GuardAllReplicas (or a count reaching every
// replica), an acquisition that one of two replicas did not acknowledge is
// undone and fails with ErrNotReplicated, leaving no lock key; with both
// replicas running it is granted. A count above the replicas connected
// waits for those there are. The option works as the Client's default and
// on one handle.
func TestGuardAllReplicas(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	rc := primary.Client(t)
	guard := WithFailoverGuard(true, 100*time.Millisecond)
	onClient := newTestClient(t, rc, guard, WithGuardReplicas(GuardAllReplicas))
	plain := newTestClient(t, rc, guard)
	ctx := testCtx(t, 60*time.Second)
	for _, tc := range []struct {
		name string
		ls   map[string]Locker
	}{
		{"client GuardAllReplicas", guardKinds(t, onClient, "guard-all-client")},
		{"handle GuardAllReplicas", guardKinds(t, plain, "guard-all-handle", WithGuardReplicas(GuardAllReplicas))},
		{"handle 2", guardKinds(t, plain, "guard-two-handle", WithGuardReplicas(2))},
		{"client 2", guardKinds(t, newTestClient(t, rc, guard, WithGuardReplicas(2)), "guard-two-client")},
		{"handle 5", guardKinds(t, plain, "guard-five-handle", WithGuardReplicas(5))},
	} {
		lockUnlockAll(t, ctx, tc.ls, tc.name+", both replicas running")
		replicas[1].Pause()
		checkNotReplicated(t, ctx, primary, tc.ls, tc.name+", one of two replicas stopped")
		replicas[1].Resume()
		lockUnlockAll(t, ctx, tc.ls, tc.name+", both replicas running again")
	}
	// A handle's own count overrides the Client's.
	one := guardKinds(t, onClient, "guard-all-one", WithGuardReplicas(1))
	replicas[0].Pause()
	defer replicas[0].Resume()
	lockUnlockAll(t, ctx, one, "WithGuardReplicas(1) on a GuardAllReplicas Client, one of two replicas stopped")
}

// TestGuardAllReplicasRenewal mirrors TestGuardRenewalNotReplicated: under
// GuardAllReplicas, a watchdog renewal only one of two replicas acknowledged
// must not move the loss deadline, since a failover may promote the other.
func TestGuardAllReplicasRenewal(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-all-renew"), lease)
	replicas[0].Pause()
	defer replicas[0].Resume()
	holds = pausedNow(holds, lease)
	for k, h := range holds {
		checkEndsBy(t, k, h, "a renewal acknowledged by one of two replicas")
	}
}

// TestGuardAllReplicasExtend mirrors TestGuardExtendNotReplicated: under
// GuardAllReplicas, an Extend only one of two replicas acknowledged fails
// with ErrNotReplicated and leaves the loss deadline where it was; one both
// acknowledged moves it.
func TestGuardAllReplicasExtend(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	const lease = 2 * time.Second
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	all := WithGuardReplicas(GuardAllReplicas)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-all-extend", WithLease(lease), all), lease)
	acked := lockAll(t, ctx, guardKinds(t, c, "guard-all-extend-acked", WithLease(lease), all), lease)
	replicas[0].Pause()
	for k, h := range holds {
		err := h.l.(Extender).Extend(ctx, h.lctx, 10*time.Second)
		if !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: Extend with one of two replicas stopped: %v, want ErrNotReplicated", k, err)
		}
	}
	replicas[0].Resume()
	for k, h := range acked {
		if err := extendOnceCaughtUp(ctx, h); err != nil {
			t.Errorf("%s: Extend with both replicas running: %v", k, err)
		}
	}
	for k, h := range holds {
		checkEndsBy(t, k, h, "an Extend acknowledged by one of two replicas")
	}
	time.Sleep(time.Until(latest(acked).Add(guardLate)))
	for k, h := range acked {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) by the deadline of its grant although both replicas acknowledged its Extend", k, err)
		}
	}
}

// TestGuardAllReplicasReadRelease mirrors TestGuardReadReleaseKeepsDeadline:
// under GuardAllReplicas, a re-entrant read release only one of two
// replicas acknowledged must not move the read hold's loss deadline.
func TestGuardAllReplicasReadRelease(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "guard-all-read-release")
	lctx, err := replicatedLock(func() (context.Context, error) { return rw.RLock(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.RUnlock(lctx) })
	var again []context.Context
	for range 5 {
		r, err := replicatedLock(func() (context.Context, error) { return rw.RLock(lctx) })
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, r)
	}
	replicas[1].Pause()
	defer replicas[1].Resume()
	h := guardedHold{l: rw.RLocker(), lctx: lctx, by: lossDeadline(time.Now(), lease)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, r := range again {
			time.Sleep(lease / 4)
			if lctx.Err() != nil {
				return
			}
			_ = rw.RUnlock(r)
		}
	}()
	checkEndsBy(t, "RLock", h, "a re-entrant read release acknowledged by one of two replicas")
	<-done
}

// TestGuardReplicasInvalid: 0 and counts below GuardAllReplicas are refused
// with ErrInvalidArgument, at New, on a handle and on a RedLock, and nothing
// is written; the kinds without a guard refuse the option by name.
func TestGuardReplicasInvalid(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	for _, n := range []int{0, -2, math.MinInt} {
		if _, err := New(rc, WithGuardReplicas(n)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New with WithGuardReplicas(%d): %v, want ErrInvalidArgument", n, err)
		}
		o := WithGuardReplicas(n)
		for kind, err := range map[string]error{
			"Mutex":           func() error { _, err := c.Mutex("bad", o); return err }(),
			"FairMutex":       func() error { _, err := c.FairMutex("bad", o); return err }(),
			"RWMutex":         func() error { _, err := c.RWMutex("bad", o); return err }(),
			"LeanMutex":       func() error { _, err := c.LeanMutex("bad", o); return err }(),
			"Semaphore":       func() error { _, err := c.Semaphore("bad", o); return err }(),
			"PermitSemaphore": func() error { _, err := c.PermitSemaphore("bad", o); return err }(),
		} {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s with WithGuardReplicas(%d): %v, want ErrInvalidArgument", kind, n, err)
			}
		}
	}
	cs := []*Client{c, newTestClient(t, redistest.Server(t).Client(t)), newTestClient(t, redistest.Server(t).Client(t))}
	if _, err := NewRedLock("bad", cs, WithGuardReplicas(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RedLock with WithGuardReplicas(0): %v, want ErrInvalidArgument", err)
	}
	if _, err := c.CountDownLatch("bad", WithGuardReplicas(2)); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "WithGuardReplicas does not apply") {
		t.Errorf("CountDownLatch with WithGuardReplicas: %v, want ErrInvalidArgument naming the option", err)
	}
	for _, n := range []int{1, 2, 5, GuardAllReplicas} {
		if _, err := c.Mutex("good", WithGuardReplicas(n)); err != nil {
			t.Errorf("Mutex with WithGuardReplicas(%d): %v", n, err)
		}
	}
	if n := dbsize(t, node); n != 0 {
		t.Errorf("constructors wrote %d keys", n)
	}
}

// TestGuardReplicasRedLock: a RedLock applies the count on each node. Node 0
// is a primary with two replicas, one stopped; the other two have none. With
// GuardAllReplicas (on the RedLock, or as the nodes' Clients' default) node
// 0's grant is undone while the others make the quorum; with the default, a
// replica acknowledged it and node 0 holds the lock too.
func TestGuardReplicasRedLock(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	nodes := append([]*redistest.Node{primary}, redistest.Servers(t, 2)...)
	guard := WithFailoverGuard(true, 50*time.Millisecond)
	plain := redlockClients(t, nodes, guard)
	all := redlockClients(t, nodes, guard, WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 30*time.Second)
	replicas[0].Pause()
	defer replicas[0].Resume()
	// A node timeout roomy enough for a loaded machine: node 0's grant, its
	// WAIT and (GuardAllReplicas) its give-back must all be answered within
	// it. With the default (200 ms), a node 0 cut off by it granted nothing
	// (default) or still held the grant its background undo gives back.
	roomy := WithNodeTimeout(time.Second)
	for _, tc := range []struct {
		name   string
		r      *RedLock
		onNode bool // node 0 holds the lock
	}{
		{"default", mustRedLock(t, "guard-redlock-default", plain, roomy), true},
		{"RedLock GuardAllReplicas", mustRedLock(t, "guard-redlock-all", plain, WithGuardReplicas(GuardAllReplicas), roomy), false},
		{"Clients GuardAllReplicas", mustRedLock(t, "guard-redlock-clients", all, roomy), false},
	} {
		lctx, err := tc.r.Lock(ctx)
		if err != nil {
			t.Errorf("%s: Lock with two of three nodes unguarded: %v", tc.name, err)
			continue
		}
		if got := heldOn(t, tc.r, nodes, 0, 1, 2); got[0] != tc.onNode || !got[1] || !got[2] {
			t.Errorf("%s: held on nodes %v, want node 0 %v and the others true", tc.name, got, tc.onNode)
		}
		if err := tc.r.Unlock(lctx); err != nil {
			t.Errorf("%s: Unlock: %v", tc.name, err)
		}
	}
}
