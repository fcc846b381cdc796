package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// guardKinds are the lockers the failover guard covers, built on c.
func guardKinds(t *testing.T, c *Client, name string, opts ...LockOption) map[string]Locker {
	rw := mustRW(t, c, name+"-rw-write", opts...)
	rr := mustRW(t, c, name+"-rw-read", opts...)
	return map[string]Locker{
		"Mutex":     mustMutex(t, c, name+"-mutex", opts...),
		"FairMutex": mustFair(t, c, name+"-fair", opts...),
		"LeanMutex": mustLean(t, c, name+"-lean", opts...),
		"RWMutex":   rw,
		"RLocker":   rr.RLocker(),
	}
}

// guardedHold is a hold taken while the replica acknowledged it.
type guardedHold struct {
	l    Locker
	lctx context.Context
	// by: the latest its loss deadline can be, as granted (the grant was
	// sent before Lock returned).
	by time.Time
}

func lockAll(t *testing.T, ctx context.Context, ls map[string]Locker, lease time.Duration) map[string]guardedHold {
	t.Helper()
	out := map[string]guardedHold{}
	for k, l := range ls {
		lctx, err := replicatedLock(func() (context.Context, error) { return l.Lock(ctx) })
		if err != nil {
			t.Fatalf("%s: Lock with the replica running: %v", k, err)
		}
		out[k] = guardedHold{l: l, lctx: lctx, by: lossDeadline(time.Now(), lease)}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
	}
	return out
}

// pausedNow returns holds with each deadline bound moved to what it can be
// once the replica stopped now: the holds were locked one after another and
// the watchdog renews every few hundred ms, so a renewal a replica
// acknowledged before the pause (sent before it) may have moved a deadline
// past its grant's, up to now + lease, and none sent after can move it.
func pausedNow(holds map[string]guardedHold, lease time.Duration) map[string]guardedHold {
	by := lossDeadline(time.Now(), lease)
	out := make(map[string]guardedHold, len(holds))
	for k, h := range holds {
		h.by = by
		out[k] = h
	}
	return out
}

// guardLate is how long past its deadline a hold's context may take to end
// here, beyond how late a timer set for that deadline fires (timers, the
// race detector, a loaded machine). Renewals confirmed by the primary alone
// would keep it alive indefinitely.
const guardLate = 300 * time.Millisecond

// extendOnceCaughtUp extends h by 10 s. A resumed replica may take a
// moment to catch up: an Extend it has not acknowledged yet is made again
// (up to 5 times), as a caller would.
func extendOnceCaughtUp(ctx context.Context, h guardedHold) error {
	err := h.l.(Extender).Extend(ctx, h.lctx, 10*time.Second)
	for range 5 {
		if !errors.Is(err, ErrNotReplicated) {
			break
		}
		err = h.l.(Extender).Extend(ctx, h.lctx, 10*time.Second)
	}
	return err
}

// checkEndsBy fails unless h's context ends with ErrLockLost within
// guardLate of a timer set for h.by (its grant's loss deadline) firing. On a machine loaded enough, that timer fires
// hundreds of milliseconds late, and so does the hold's loss timer: that is
// the runtime's, not a deadline the product moved.
func checkEndsBy(t *testing.T, k string, h guardedHold, what string) {
	t.Helper()
	probe := make(chan time.Time, 1)
	// Set after the deadline (an earlier hold's check ran past it), the
	// probe measures nothing: no allowance then.
	early := time.Now().Before(h.by)
	pt := time.AfterFunc(time.Until(h.by), func() { probe <- time.Now() })
	defer pt.Stop()
	var late time.Duration // how late the probe fired
	select {
	case <-h.lctx.Done():
	case at := <-probe:
		if early {
			late = max(0, at.Sub(h.by))
		}
		select {
		case <-h.lctx.Done():
		case <-time.After(time.Until(h.by.Add(late + guardLate))):
			if h.lctx.Err() != nil {
				// Both were ready: select chose at random.
				break
			}
			t.Errorf("%s: lock context still live %s past the deadline of its replicated grant (a timer for that deadline fired %s late), with a replica the guard waits for stopped: %s moved the loss deadline although not every replica it waits for acknowledged it",
				k, (late + guardLate).Round(time.Millisecond), late.Round(time.Millisecond), what)
			return
		}
	}
	if cause := context.Cause(h.lctx); !errors.Is(cause, ErrLockLost) {
		t.Errorf("%s: lock context ended with %v, want ErrLockLost", k, cause)
	}
	// The timing above allows for timers the load makes late, and so lets
	// a deadline moved by less than that allowance pass: the deadline the
	// hold ended at must itself be no later than its grant's.
	lc, _ := h.lctx.Value(lockCtxKey{}).(*lockCtx)
	if lc == nil || lc.hold == nil {
		t.Errorf("%s: lock context without its hold", k)
		return
	}
	if at := monoTime(lc.hold.lossAt.Load()); at.After(h.by) {
		t.Errorf("%s: loss deadline %s past the deadline of its replicated grant, with a replica the guard waits for stopped: %s moved the loss deadline although not every replica it waits for acknowledged it",
			k, at.Sub(h.by).Round(time.Millisecond), what)
	}
}

// TestGuardRenewalNotReplicated: with the failover guard on, a watchdog
// renewal that no replica acknowledged (the only replica is stopped, so a
// failover would promote it with the old expiry) must not move the hold's
// loss deadline: the lock context ends by the deadline of the last
// replicated grant or renewal, before the promoted replica could grant the
// lock to another owner.
func TestGuardRenewalNotReplicated(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-renew"), lease)
	replica.Pause()
	defer replica.Resume()
	holds = pausedNow(holds, lease)
	for k, h := range holds {
		checkEndsBy(t, k, h, "a renewal")
	}
}

// TestGuardRenewalAckedLater: a renewal no replica acknowledged leaves the
// deadline where it was, and a later one that a replica acknowledges moves
// it on: a replica stopped for less than the lease costs no hold.
func TestGuardRenewalAckedLater(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease, every = 2 * time.Second, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-renew-later"), lease)
	replica.Pause()
	time.Sleep(700 * time.Millisecond) // renewals go unacknowledged
	replica.Resume()
	time.Sleep(time.Until(latest(holds).Add(guardLate)))
	for k, h := range holds {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) although renewals were acknowledged again before its deadline", k, err)
		}
	}
}

func latest(hs map[string]guardedHold) time.Time {
	var at time.Time
	for _, h := range hs {
		if h.by.After(at) {
			at = h.by
		}
	}
	return at
}

// TestGuardExtendNotReplicated: with the failover guard on, an Extend no
// replica acknowledged fails with ErrNotReplicated and leaves the loss
// deadline where it was; one acknowledged moves it.
func TestGuardExtendNotReplicated(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	// Long enough for every kind's refused Extend (each waits the 100 ms
	// timeout) and every acked kind's Extend on a loaded machine: with 2 s,
	// a FairMutex's lease ran out before its acknowledged Extend.
	const lease = 5 * time.Second
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	holds := lockAll(t, ctx, guardKinds(t, c, "guard-extend", WithLease(lease)), lease)
	acked := lockAll(t, ctx, guardKinds(t, c, "guard-extend-acked", WithLease(lease)), lease)
	replica.Pause()
	for k, h := range holds {
		err := h.l.(Extender).Extend(ctx, h.lctx, 10*time.Second)
		if !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: Extend with the only replica stopped: %v, want ErrNotReplicated", k, err)
		}
	}
	replica.Resume()
	for k, h := range acked {
		if err := extendOnceCaughtUp(ctx, h); err != nil {
			t.Errorf("%s: Extend with the replica running: %v", k, err)
		}
	}
	for k, h := range holds {
		checkEndsBy(t, k, h, "an Extend")
	}
	time.Sleep(time.Until(latest(acked).Add(guardLate)))
	for k, h := range acked {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold ended (%v) by the deadline of its grant although its Extend was acknowledged", k, err)
		}
	}
}

// TestGuardRenewalCluster: on a Cluster, guarded renewals go out per hash
// slot with a WAIT on the slot's primary: with one shard's only replica
// stopped, its holds end by the deadline of their replicated grant, and the
// holds on the other shards, whose replicas acknowledge, live on.
func TestGuardRenewalCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	const lease, every = 1500 * time.Millisecond, 250 * time.Millisecond
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 60*time.Second)
	ls := map[string]Locker{}
	for i := range 12 {
		name := "guard-renew-cluster-" + strconv.Itoa(i)
		ls[name] = mustMutex(t, c, name)
	}
	holds := lockAll(t, ctx, ls, lease)
	stopped := cl.NodeFor(t, ls["guard-renew-cluster-0"].(*Mutex).Key())
	replica := replicaOf(t, cl, stopped)
	replica.Pause()
	defer replica.Resume()
	holds = pausedNow(holds, lease)
	others := map[string]guardedHold{}
	for k, h := range holds {
		if cl.NodeFor(t, h.l.(*Mutex).Key()) == stopped {
			checkEndsBy(t, k, h, "a renewal")
		} else {
			others[k] = h
		}
	}
	if len(others) == 0 {
		t.Fatal("every name is on one shard")
	}
	time.Sleep(time.Until(latest(holds).Add(guardLate)))
	for k, h := range others {
		if err := context.Cause(h.lctx); err != nil {
			t.Errorf("%s: hold on a shard whose replica runs ended (%v)", k, err)
		}
	}
}
