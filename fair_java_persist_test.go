package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The FairMutex waiter first in line behind a Java holder whose lock has no
// expiry (PERSIST, or another program's hash) takes the lock at that
// holder's unlock too, as a Mutex waiter does: the refusal says the holder
// is not a scriptlock client whatever its lease. It said so only while an
// expiry was set, and the head took the lock a third of its waiter timeout
// after the unlock.
func TestFairMutexHeadWokenByJavaUnlockNoExpiry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(30*time.Second))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "fair-java-persist")
	key := f.Key()
	j := redissonJava{rc: node.Client(t), uuid: "3b241101-e2bb-4255-8caf-4136c566a962", thread: 1}
	if tok, err := j.fencedLock(ctx, key); err != nil || tok < 0 {
		t.Fatalf("Java lock: token %d, %v", tok, err)
	}
	if n, err := node.Do(t, "PERSIST", key).AsInt64(); err != nil || n != 1 {
		t.Fatalf("PERSIST = %d, %v", n, err)
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
		t.Fatalf("behind a Java holder without expiry, the FairMutex waiter took the lock %s after the unlock, want it woken by the unlock (within 3s)", late.Round(time.Millisecond))
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
