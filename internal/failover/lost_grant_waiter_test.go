package failover_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// longWaiter keeps a waiting lock from calling again every third of its
// waiter timeout (5 s by default, a call every 1.7 s), which would take the
// lock soon after the promotion whether the failover woke the waiter or
// not: it calls again at the lease it read, 30 s.
var longWaiter = scriptlock.WithWaiterTimeout(2 * time.Minute)

// TestSentinelFailoverLostGrantWaiter: a lock (Mutex, FairMutex, RWMutex) held under the watchdog and
// waited on, whose grant no replica received, when the primary dies. The
// promoted replica serves without the lock: the holder's context ends at
// its first renewal there, and the waiter, asleep until the lease it read
// (30 s) and subscribed on the old primary, tries again on the new one and
// takes the lock there, soon after the failover rather than at that lease.
func TestSentinelFailoverLostGrantWaiter(t *testing.T) {
	t.Parallel()
	for _, kind := range lockKinds {
		for _, guard := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/waiter guard=%v", kind.name, guard), func(t *testing.T) {
				t.Parallel()
				s := redistest.Sentinel(t, redistest.WithProxiedReplication())
				prefix := redistest.Prefix(t)
				const lease = 30 * time.Second
				wd := scriptlock.WithWatchdog(lease, time.Second)
				// The holder's grant must reach no replica: its Client has no
				// guard, which would refuse it.
				hc := sentinelLocks(t, s, prefix, guardOpt(false), wd)
				wc := sentinelLocks(t, s, prefix, guardOpt(guard), wd, longWaiter)
				h, w := mustLock(t, kind.make, hc, "m"), mustLock(t, kind.make, wc, "m")
				key := h.(interface{ Key() string }).Key()
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				// Both Clients have their connections up before replication is
				// held back.
				for _, m := range []scriptlock.Locker{h, w} {
					l, err := m.Lock(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := m.Unlock(l); err != nil {
						t.Fatal(err)
					}
				}
				for _, r := range s.Data[1:] {
					for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
						if n, err := r.Do(t, "EXISTS", key).AsInt64(); err == nil && n == 0 {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("replica %s still has %s 5 s after its release", r.Addr, key)
						}
					}
				}
				for _, p := range s.ReplicationProxies {
					p.Freeze()
				}
				held, err := h.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				type got struct {
					at  time.Time
					ctx context.Context
					err error
				}
				waited := make(chan got, 1)
				go func() {
					l, err := w.Lock(ctx)
					waited <- got{time.Now(), l, err}
				}()
				// The waiter found the lock held and sleeps, subscribed.
				old := s.Data[0]
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					chans, err := old.Do(t, "PUBSUB", "CHANNELS", "*"+prefix+"*").AsStrSlice()
					if err == nil && len(chans) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the waiter did not subscribe")
					}
				}
				time.Sleep(500 * time.Millisecond)
				old.Kill()
				for _, p := range s.ReplicationProxies {
					p.DropAll()
					p.Thaw()
				}
				primary, took := s.WaitFailover(t, old, 1)
				promoted := time.Now()
				t.Logf("%s promoted in %v", primary.Addr, took)

				const bound = 10 * time.Second
				select {
				case <-held.Done():
					if cause := context.Cause(held); !errors.Is(cause, scriptlock.ErrLockLost) {
						t.Errorf("holder's context ended with %v, want ErrLockLost", cause)
					}
					t.Logf("holder's context ended %v after the promotion", time.Since(promoted).Round(time.Millisecond))
				case <-time.After(bound):
					t.Errorf("holder's context still alive %v after the promotion of a replica without its lock", bound)
				}
				select {
				case g := <-waited:
					if g.err != nil {
						t.Fatalf("waiter: %v", g.err)
					}
					t.Logf("waiter took the lock %v after the promotion", g.at.Sub(promoted).Round(time.Millisecond))
					if n, err := primary.Do(t, "EXISTS", key).AsInt64(); err != nil || n != 1 {
						t.Errorf("waiter's lock not on the new primary %s: %d %v", primary.Addr, n, err)
					}
					if err := w.Unlock(g.ctx); err != nil {
						t.Errorf("waiter's Unlock: %v", err)
					}
				case <-time.After(bound):
					t.Errorf("waiter still waiting %v after the promotion of a replica without the lock", bound)
					g := <-waited
					t.Logf("waiter took the lock %v after the promotion (%v)", g.at.Sub(promoted).Round(time.Millisecond), g.err)
				}
			})
		}
	}
}
