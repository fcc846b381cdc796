package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A LeanMutex TryLock that gives up tells the holder's remaining lease, as
// every lock's NotAcquiredError does (docs/locks.md, typed errors; the
// middleware caps its Retry-After by it): SET NX GET answers the holder but
// not its lease, and Remaining was always 0.
func TestLeanTryLockRefusalTellsHoldersLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	holderC := newTestClient(t, node.Client(t), prefix)
	waiterC := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	const lease = 10 * time.Second
	for _, fenced := range []bool{false, true} {
		var opts []LockOption
		if fenced {
			opts = append(opts, WithFencing())
		}
		name := "refused-lease"
		if fenced {
			name += "-fenced"
		}
		hctx, err := mustLean(t, holderC, name, opts...).LockWithLease(ctx, lease)
		if err != nil {
			t.Fatal(err)
		}
		l := mustLean(t, waiterC, name, opts...)
		// A wait long enough for a loaded machine's call to be answered
		// (a loaded CI run left one unanswered at the end of 500 ms).
		for _, wait := range []time.Duration{0, 2 * time.Second} {
			_, err := l.TryLock(ctx, wait)
			var na *NotAcquiredError
			if !errors.As(err, &na) || na.Unanswered {
				t.Fatalf("fenced %v, TryLock(%s) of a held lock: %v, want a NotAcquiredError", fenced, wait, err)
			}
			if na.Remaining <= lease-5*time.Second || na.Remaining > lease {
				t.Errorf("fenced %v, TryLock(%s): Remaining %s, want the holder's lease left (under %s)", fenced, wait, na.Remaining, lease)
			}
		}
		if err := mustLean(t, holderC, name, opts...).Unlock(hctx); err != nil {
			t.Fatal(err)
		}
	}
}
