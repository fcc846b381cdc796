package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClientPauseWrite: CLIENT PAUSE WRITE (what Redis's FAILOVER command and
// operators' maintenance do) holds back every write and every script that may
// write, while reads are still answered. A hold whose renewals are held back
// for less than its lease is kept; one held back for longer is signalled lost
// before its lease ends on the server, and its Unlock, answered after the
// pause, says it was not held. A waiter on another Client takes the lock once
// the pause is over.
func TestClientPauseWrite(t *testing.T) {
	t.Parallel()
	const lease, every = 3 * time.Second, time.Second
	for _, tc := range []struct {
		pause time.Duration
		kept  bool
	}{
		{1500 * time.Millisecond, true},
		{5 * time.Second, false},
	} {
		t.Run(tc.pause.String(), func(t *testing.T) {
			node := redistest.Server(t)
			shared := sharedPrefix(t)
			c := newTestClient(t, node.Client(t), shared, WithWatchdog(lease, every))
			other := newTestClient(t, node.Client(t), shared)
			ctx := testCtx(t, 30*time.Second)
			m := mustMutex(t, c, "paused")
			lctx, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			if err := node.Do(t, "CLIENT", "PAUSE", strconv.FormatInt(tc.pause.Milliseconds(), 10), "WRITE").Error(); err != nil {
				t.Fatalf("CLIENT PAUSE: %v", err)
			}
			// Reads are answered during the pause, and no write lands
			// before it ends: the lock's expiry as the server will apply it.
			expiry, err := node.Do(t, "PEXPIRETIME", m.Key()).AsInt64()
			if err != nil || expiry <= 0 {
				t.Fatalf("PEXPIRETIME during the pause: %d, %v", expiry, err)
			}
			type taken struct {
				at  time.Time
				err error
			}
			got := make(chan taken, 1)
			go func() {
				m2 := mustMutex(t, other, "paused")
				wctx, err := m2.Lock(ctx)
				at := time.Now()
				if err == nil {
					err = m2.Unlock(wctx)
				}
				got <- taken{at, err}
			}()
			select {
			case <-lctx.Done():
				if tc.kept {
					t.Fatalf("hold lost %v into a pause of %v, its lease %v: %v", time.Since(start), tc.pause, lease, context.Cause(lctx))
				}
				if !errors.Is(context.Cause(lctx), ErrLockLost) {
					t.Fatalf("hold ended with %v, want ErrLockLost", context.Cause(lctx))
				}
				// The context ends at the hold's loss deadline (other tests
				// time that), which must come before the server's expiry:
				// both on this machine's clock.
				lossAt := monoTime(lctx.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
				if ms := lossAt.UnixMilli(); ms >= expiry {
					t.Fatalf("loss deadline %d ms after the lock's expiry on the server", ms-expiry)
				}
			case <-time.After(tc.pause + 2*time.Second):
				if !tc.kept {
					t.Fatalf("hold not signalled lost %v into a pause of %v, its lease %v", time.Since(start), tc.pause, lease)
				}
			}
			unlocking := time.Now()
			err = m.Unlock(lctx)
			switch {
			case tc.kept && err != nil:
				t.Fatalf("Unlock after a pause shorter than the lease: %v", err)
			case !tc.kept && !errors.Is(err, ErrNotHeld):
				t.Fatalf("Unlock of a hold lost in the pause: %v, want ErrNotHeld", err)
			}
			select {
			case w := <-got:
				if w.err != nil {
					t.Fatalf("waiter on another Client: %v", w.err)
				}
				// Its attempts, writes, wait out the pause, which began
				// before start (by up to the reply's way back, a second
				// allowed for a loaded machine); a kept hold is released
				// only by its Unlock.
				if tc.kept && w.at.Before(unlocking) {
					t.Fatalf("waiter took the lock %v before the holder's Unlock was called", unlocking.Sub(w.at))
				}
				if !tc.kept && w.at.Before(start.Add(tc.pause-time.Second)) {
					t.Fatalf("waiter took the lock %v into a pause of %v", w.at.Sub(start), tc.pause)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("waiter on another Client still waits %v after the pause ended", time.Since(start)-tc.pause)
			}
		})
	}
}
