package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// ForceUnlocks of many names leave no entry per name in the Client once
// they and the acquisitions beside them have ended: the marks that tell an
// acquisition in flight its grant may have been deleted were kept until a
// ForceUnlock a minute later, and for good after the last one.
func TestForceUnlocksLeaveNoEntries(t *testing.T) {
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 20*time.Second)
	for i := range 50 {
		m := mustMutex(t, c, "forced-"+strconv.Itoa(i))
		lctx, err := m.LockWithLease(ctx, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// Beside an acquisition in flight of another name.
		other := mustMutex(t, c, "other-"+strconv.Itoa(i))
		started := make(chan struct{})
		got := make(chan error, 1)
		go func() {
			close(started)
			octx, err := other.Lock(ctx)
			if err == nil {
				err = other.Unlock(octx)
			}
			got <- err
		}()
		<-started
		if ok, err := m.ForceUnlock(ctx); !ok || err != nil {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		_ = m.Unlock(lctx)
	}
	c.mu.Lock()
	n := len(c.forcing)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d ForceUnlock marks kept after every ForceUnlock and acquisition ended", n)
	}
}
