package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// javaHeldFair is a FairMutex named name on a server of its own (its
// Client's waiter timeout 30 s), whose lock a Java holder (Redisson's
// RFencedLock) has taken, and that holder; ctx ends in 30 s.
func javaHeldFair(t *testing.T, name string) (node *redistest.Node, ctx context.Context, f *FairMutex, j redissonJava) {
	t.Helper()
	node = redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(30*time.Second))
	ctx = testCtx(t, 30*time.Second)
	f = mustFair(t, c, name)
	// Redisson's connection manager id is a version-4 UUID.
	j = redissonJava{rc: node.Client(t), uuid: "3b241101-e2bb-4255-8caf-4136c566a962", thread: 1}
	if tok, err := j.fencedLock(ctx, f.Key()); err != nil || tok < 0 {
		t.Fatalf("Java lock: token %d, %v", tok, err)
	}
	return node, ctx, f, j
}

// lockAtJavaUnlock is f's Lock while j unlocks 500 ms after it began, and
// how long after that unlock Lock returned.
func lockAtJavaUnlock(t *testing.T, ctx context.Context, f *FairMutex, j redissonJava) (context.Context, time.Duration) {
	t.Helper()
	unlockedAt := make(chan time.Time, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		unlockedAt <- time.Now()
		if n, err := j.unlock(ctx, f.Key()); err != nil || n != 1 {
			t.Errorf("Java unlock = %d, %v", n, err)
		}
	}()
	l, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took, unlocked := time.Now(), <-unlockedAt
	return l, took.Sub(unlocked)
}
