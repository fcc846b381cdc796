package scriptlock

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// renewalSettled is an Observer that closes settled at the first Renewal
// report of a round trip that renewed nothing (the held-up one ended).
type renewalSettled struct {
	*pairing
	settled chan struct{}
	once    sync.Once
}

func (r *renewalSettled) Renewal(e RenewalEvent) {
	if e.Renewed == 0 {
		r.once.Do(func() { close(r.settled) })
	}
}

// A watchdog renewal of a hold that is not shared is held up on its way (in
// a proxy) past its deadline: the hold's loss deadline ends the hold, the
// Client gives up on the call, and the owner locks again, under the owner id
// read from the ended hold's context, with a longer explicit lease. When the
// renewal's bytes reach the server at last, it must leave the new hold's
// lease alone: it would set the watchdog's shorter lease, while the new
// hold's context keeps its own longer deadline.
func TestLateRenewalOfUnsharedHoldSparesOwnersNewHold(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		switch lc.name {
		case "FairMutex", "LeanMutex", "RWMutexRead":
			// Renewed as a Mutex; an unfenced LeanMutex and a read hold draw
			// no token that the renewal could name.
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			prefix := sharedPrefix(t)
			o := &renewalSettled{pairing: newPairing(), settled: make(chan struct{})}
			c := newTestClient(t, px.Client(t), prefix, WithWatchdog(time.Second, 300*time.Millisecond), WithObserver(o))
			other := newTestClient(t, node.Client(t), prefix)
			defer px.Thaw()
			// The second renewal is held up: the first has loaded the script,
			// so the late one runs when it lands.
			var sends atomic.Int32
			c.wd.sendHook = func() {
				if sends.Add(1) == 2 {
					px.HoldOpen()
				}
			}
			l, ol := lc.make(t, c, "renew-late"), lc.make(t, other, "renew-late")
			first, err := l.Lock(testCtx(t, 20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-first.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the hold outlived its lease with its renewal held up")
			}
			lost := time.Now()
			select {
			case <-o.settled:
			case <-time.After(5 * time.Second):
				t.Fatal("the held-up renewal never ended")
			}
			// The owner locks again once the ended hold is gone on the server
			// and the background undo of what its renewal may have extended
			// is over (it looks for as long as the lease): this test is about
			// the renewal alone.
			key := l.(interface{ Key() string }).Key()
			if !eventually(3*time.Second, func() bool {
				n, err := node.Do(t, "EXISTS", key).AsInt64()
				return err == nil && n == 0
			}) {
				t.Fatal("the ended hold is still on the server")
			}
			time.Sleep(time.Until(lost.Add(1200 * time.Millisecond)))
			owner, _ := OwnerFrom(first)
			second, err := lc.withLease(l, WithOwner(testCtx(t, 20*time.Second), owner), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock(second)
			px.Thaw()
			time.Sleep(1300 * time.Millisecond) // past the watchdog's lease
			octx, err := ol.(interface {
				TryLock(context.Context, time.Duration) (context.Context, error)
			}).TryLock(testCtx(t, 5*time.Second), 0)
			if err == nil {
				defer ol.Unlock(octx)
				if second.Err() == nil {
					t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the late renewal of its earlier hold set the watchdog's lease on it")
				}
			}
		})
	}
}
