package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSlotMovedWhileHeld: a lock's slot moves to another primary while the
// lock is held under the watchdog and a waiter waits on it. Through the ASK
// window and after the MOVED the watchdog keeps renewing the lock where its
// keys are now, the hold's context is not ended, Unlock releases it there,
// and the waiter, whose subscription was on the old node (a sharded one the
// old node ends as the slot leaves it), is woken by the release message
// rather than at its fallback timer (the lease, 30 s). A waiting Mutex also calls
// again every third of its waiter timeout (5 s by default): two minutes
// keeps that call from taking the lock soon after the release, which would
// hide a lost wake.
func TestSlotMovedWhileHeld(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sharded, guard bool }{{true, false}, {false, false}, {true, true}} {
		sharded, guard := c.sharded, c.guard
		name := "plain"
		if sharded {
			name = "sharded"
		}
		var copts []redistest.Option
		if guard {
			// Under the guard each renewal and its WAIT go out on a
			// dedicated connection, which follows no redirection itself.
			name += "/guard"
			copts = append(copts, redistest.WithClusterReplicas(1))
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cl := redistest.Cluster(t, 3, copts...)
			opts := []Option{sharedPrefix(t), WithShardedPubSub(sharded), WithFailoverGuard(false, 0), WithWatchdog(30*time.Second, 500*time.Millisecond), WithWaiterTimeout(2 * time.Minute)}
			if guard {
				opts[2] = WithFailoverGuard(true, 500*time.Millisecond)
			}
			h := newTestClient(t, cl.Client(t), opts...)
			w := newTestClient(t, cl.Client(t), opts...)
			ctx := testCtx(t, 90*time.Second)
			holder, waiter := mustMutex(t, h, "moving"), mustMutex(t, w, "moving")
			held, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			woken := make(chan time.Time, 1)
			got := within(t, 60*time.Second, "the waiter's Lock", func() error {
				l, err := waiter.Lock(ctx)
				woken <- time.Now()
				if err != nil {
					return err
				}
				return waiter.Unlock(l)
			})
			from := cl.NodeFor(t, waiter.Key())
			wake := w.subs.ownWake(waiter.wake)
			if !eventually(10*time.Second, func() bool { return subscribers(t, from, sharded, wake) == 1 }) {
				t.Fatal("the waiter did not subscribe on the node serving its lock")
			}
			mig := cl.StartMigration(t, waiter.Key())
			if mig.MoveKeys(t) == 0 {
				t.Fatal("no key moved")
			}
			// Renewals meet ASK for a while, then MOVED.
			time.Sleep(2 * time.Second)
			mig.Finish(t)
			time.Sleep(2 * time.Second)
			if err := held.Err(); err != nil {
				t.Fatalf("the hold's context ended while the lock was held: %v (%v)", err, context.Cause(held))
			}
			pttl, err := mig.To.Do(t, "PTTL", holder.Key()).AsInt64()
			if err != nil || pttl < 28000 {
				t.Fatalf("lock on %s: PTTL %d (%v), want renewed to over 28 s", mig.To.Addr, pttl, err)
			}
			released := time.Now()
			if err := holder.Unlock(held); err != nil {
				t.Fatalf("Unlock after the slot moved: %v", err)
			}
			got()
			if d := (<-woken).Sub(released); d > 4*time.Second {
				t.Errorf("the waiter took the lock %v after its release: not woken by the release message", d.Round(time.Millisecond))
			}

			// Released during the ASK window: the keys are on the target,
			// the slot still the source's. The release names keys that do
			// not exist (its queue), which the target answers TRYAGAIN
			// until the migration ends, as a reshard ends it right after
			// moving the keys: it is made then.
			if held, err = holder.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			got = within(t, 60*time.Second, "the waiter's second Lock", func() error {
				l, err := waiter.Lock(ctx)
				woken <- time.Now()
				if err != nil {
					return err
				}
				return waiter.Unlock(l)
			})
			if !eventually(10*time.Second, func() bool {
				n := int64(0)
				for _, node := range cl.Nodes {
					n += subscribers(t, node, sharded, wake)
				}
				return n == 1
			}) {
				t.Fatal("the second waiter did not subscribe")
			}
			mig = cl.StartMigration(t, waiter.Key())
			if mig.MoveKeys(t) == 0 {
				t.Fatal("no key moved")
			}
			time.Sleep(2 * time.Second)
			if err := held.Err(); err != nil {
				t.Fatalf("the hold's context ended while the lock was held, slot migrating: %v (%v)", err, context.Cause(held))
			}
			unlocked := make(chan error, 1)
			go func() { unlocked <- holder.Unlock(held) }()
			time.Sleep(500 * time.Millisecond)
			mig.Finish(t)
			released = time.Now()
			if err := <-unlocked; err != nil {
				t.Fatalf("Unlock begun with the slot migrating: %v", err)
			}
			got()
			if d := (<-woken).Sub(released); d > 4*time.Second {
				t.Errorf("the waiter took the lock %v after the migration ended: not woken by the release message", d.Round(time.Millisecond))
			}
			for _, n := range cl.Nodes {
				if k, _ := n.Do(t, "EXISTS", holder.Key()).AsInt64(); k != 0 {
					t.Errorf("lock key left on %s after both released", n.Addr)
				}
			}
		})
	}
}
