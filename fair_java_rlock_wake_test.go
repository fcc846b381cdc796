package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
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
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(30*time.Second))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "fair-java-rlock-wake")
	key := f.Key()
	// Redisson's connection manager id is a version-4 UUID.
	j := redissonJava{rc: node.Client(t), uuid: "3b241101-e2bb-4255-8caf-4136c566a962", thread: 1}
	if tok, err := j.fencedLock(ctx, key); err != nil || tok < 0 {
		t.Fatalf("Java lock: token %d, %v", tok, err)
	}
	unlockedAt := make(chan time.Time, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		unlockedAt <- time.Now()
		if n, err := j.unlock(ctx, key); err != nil || n != 1 {
			t.Errorf("Java unlock = %d, %v", n, err)
		}
	}()
	l, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took, unlocked := time.Now(), <-unlockedAt
	// A loaded machine may take a few round trips; a poll takes 10 s.
	if late := took.Sub(unlocked); late > 3*time.Second {
		t.Fatalf("the FairMutex waiter took the lock %s after the Java holder unlocked, want it woken by the unlock (within 3s)", late.Round(time.Millisecond))
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
