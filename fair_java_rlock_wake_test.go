package scriptlock

import (
	"testing"
	"time"
)

// A FairMutex waiter first in line behind a Java RLock holder (Redisson's
// RLock or RFencedLock, whose unlock sends Redisson's "0" on
// redisson_lock__channel:{name} alone) takes the lock when that holder
// unlocks, as a Mutex waiter does: the refusal says the holder is not a
// scriptlock client, and the waiter listens on Redisson's channel too. It
// heard only its own wake channel, which no Java release reaches, and took
// the lock a third of its waiter timeout later.
func TestFairMutexHeadWokenByJavaRLockUnlock(t *testing.T) {
	t.Parallel()
	_, ctx, f, j := javaHeldFair(t, "fair-java-rlock-wake")
	l, late := lockAtJavaUnlock(t, ctx, f, j)
	// A loaded machine may take a few round trips; a poll takes 10 s.
	if late > 3*time.Second {
		t.Fatalf("the FairMutex waiter took the lock %s after the Java holder unlocked, want it woken by the unlock (within 3s)", late.Round(time.Millisecond))
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
