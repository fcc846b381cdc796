package scriptlock

import (
	"testing"
	"time"
)

// The FairMutex waiter first in line behind a Java holder whose lock has no
// expiry (PERSIST, or another program's hash) takes the lock at that
// holder's unlock too, as a Mutex waiter does: the refusal says the holder
// is not a scriptlock client whatever its lease. It said so only while an
// expiry was set, and the head took the lock a third of its waiter timeout
// after the unlock.
func TestFairMutexHeadWokenByJavaUnlockNoExpiry(t *testing.T) {
	t.Parallel()
	node, ctx, f, j := javaHeldFair(t, "fair-java-persist")
	if n, err := node.Do(t, "PERSIST", f.Key()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("PERSIST = %d, %v", n, err)
	}
	l, late := lockAtJavaUnlock(t, ctx, f, j)
	// A loaded machine may take a few round trips; a poll takes 10 s.
	if late > 3*time.Second {
		t.Fatalf("behind a Java holder without expiry, the FairMutex waiter took the lock %s after the unlock, want it woken by the unlock (within 3s)", late.Round(time.Millisecond))
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
