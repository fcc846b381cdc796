package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An RWMutex hold taken with a long lease and handed to the watchdog by a
// re-entry without one: the watchdog's first renewal sets the owner's read
// lease keys (read) or the lock (write) to the watchdog's shorter lease as
// soon as it runs. Its reply is held up, and no later renewal reaches the
// server; once that lease has run out and
// another owner holds the write lock, the hold's contexts must have ended.
func TestLeaseHoldHandedToWatchdogRenewalShortens(t *testing.T) {
	t.Parallel()
	for _, read := range []bool{true, false} {
		name := "write"
		if read {
			name = "read"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			const watchdog = time.Second
			entered, proceed := make(chan struct{}), make(chan struct{})
			var once atomic.Bool
			c := newTestClient(t, node.Client(t), WithWatchdog(watchdog, 0))
			// Holds up the handling of the first renewal, after it ran,
			// and every later renewal before it is sent: the server is out
			// of reach.
			c.wd.renewedHook = func() {
				if once.CompareAndSwap(false, true) {
					close(entered)
					<-proceed
				}
			}
			c.wd.sendHook = func() {
				if once.Load() {
					<-proceed
				}
			}
			defer close(proceed)
			rw := mustRW(t, c, "lease-handover-"+name)
			actx := WithOwner(testCtx(t, 30*time.Second), "A")
			lock := rw.LockWithLease
			relock := rw.Lock
			if read {
				lock, relock = rw.RLockWithLease, rw.RLock
			}
			outer, err := lock(actx, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := relock(actx); err != nil { // hands the hold to the watchdog
				t.Fatal(err)
			}
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("no renewal")
			}
			time.Sleep(watchdog + 200*time.Millisecond) // the renewal's lease runs out
			if read {
				// Another reader comes and goes: its release finds none of
				// A's read lease keys left and deletes the lock.
				b, err := rw.RLockWithLease(WithOwner(testCtx(t, 5*time.Second), "B"), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if err := rw.RUnlock(b); err != nil {
					t.Fatal(err)
				}
			}
			w, err := rw.TryLockWithLease(WithOwner(testCtx(t, 5*time.Second), "C"), 0, 5*time.Second)
			if err != nil {
				t.Fatalf("the writer was refused: %v", err)
			}
			defer rw.Unlock(w)
			if context.Cause(outer) == nil {
				t.Errorf("another owner holds the write lock while the %s hold's context lives", name)
			}
		})
	}
}
