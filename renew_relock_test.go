package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A watchdog renewal of a shared owner's hold (WithOwner) is taken from the
// schedule before the hold's last Unlock and reaches the server after the
// owner locked again with a longer explicit lease: the renewal names the
// owner's field, and must not set the watchdog's shorter lease on the new
// hold, whose lock context keeps its own longer deadline.
func TestRenewalOfReleasedHoldSparesOwnersNewHold(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if lc.name == "FairMutex" {
			continue // renewed as a Mutex
		}
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 200*time.Millisecond))
			o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
			entered, gate := make(chan struct{}), make(chan struct{})
			var once sync.Once
			c.wd.sendHook = func() {
				once.Do(func() {
					close(entered)
					<-gate
				})
			}
			var sent sync.Once
			send := func() { sent.Do(func() { close(gate) }) }
			defer send()
			l := lc.make(t, c, "renew-relock")
			ol := lc.make(t, o, "renew-relock")
			ctx := WithOwner(testCtx(t, 20*time.Second), "job-9")
			first, err := l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("no renewal")
			}
			if err := l.Unlock(first); err != nil {
				t.Fatal(err)
			}
			second, err := lc.withLease(l, ctx, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock(second)
			send()
			time.Sleep(1300 * time.Millisecond) // past the watchdog's lease
			if lc.name == "RWMutexRead" {
				// A read release of another owner sets the lock's expiry to
				// the longest read lease left.
				r, err := ol.Lock(testCtx(t, 5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				if err := ol.Unlock(r); err != nil {
					t.Fatal(err)
				}
				ol = lc.make(t, o, "renew-relock").(readLocker).rw
			}
			octx, err := ol.(interface {
				TryLock(context.Context, time.Duration) (context.Context, error)
			}).TryLock(testCtx(t, 5*time.Second), 0)
			if err == nil {
				defer ol.Unlock(octx)
				if second.Err() == nil {
					t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the renewal of its earlier hold set the watchdog's lease on it")
				}
			}
		})
	}
}

// The same with an owner that is not shared: its hold's renewal names no
// token, and the owner locks again under the owner id read from the ended
// hold's context. The new hold's context must end with the watchdog's lease
// the renewal may set on it.
func TestRenewalOfEndedHoldBoundsOwnersNewHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 200*time.Millisecond))
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.wd.sendHook = func() {
		once.Do(func() {
			close(entered)
			<-gate
		})
	}
	var sent sync.Once
	send := func() { sent.Do(func() { close(gate) }) }
	defer send()
	m, om := mustMutex(t, c, "renew-relock-owner"), mustMutex(t, o, "renew-relock-owner")
	first, err := m.Lock(testCtx(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal")
	}
	owner, _ := OwnerFrom(first)
	if err := m.Unlock(first); err != nil {
		t.Fatal(err)
	}
	second, err := m.LockWithLease(WithOwner(testCtx(t, 20*time.Second), owner), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(second)
	send()
	time.Sleep(1300 * time.Millisecond) // past the watchdog's lease
	if octx, err := om.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
		defer om.Unlock(octx)
		if second.Err() == nil {
			t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the renewal of its earlier hold set the watchdog's lease on it")
		}
	}
}
