package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry made by TryLock with a wait moves the queued scores no lower
// than one made without: the floor is the head's deadline under the new
// lease by the threadWaitTime its RFairLock queued with (the handle's), not
// the TryLock wait, which only sets the scores of this caller's own place.
// With the wait as the floor, a head queued by Redisson's lock() (5 minutes)
// was moved to a deadline a few hundred ms past the new expiry: asking again
// it read a negative estimate (score - threadWaitTime - now), on which
// Redisson's lock() waits for a message only, and a newcomer after that
// deadline evicted the live waiter, which no release would then tell.
func TestFairRedissonShorterReentryWithWaitKeepsWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "reentry-wait-keeps-waiter", WithRedissonFairQueue(DefaultRedissonThreadWaitTime))
	first := newRedissonJava(node.Client(t), 1)
	outer, err := f.TryLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := first.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	if _, err := f.TryLockWithLease(outer, 0, time.Hour); err != nil {
		t.Fatal(err)
	}
	const lease = 2 * time.Second
	if _, err := f.TryLockWithLease(outer, 100*time.Millisecond, lease); err != nil {
		t.Fatal(err)
	}
	reentered := time.Now()
	acquired, ttl, err := first.fairLock(ctx, f.Key())
	if err != nil || acquired {
		t.Fatalf("Java fair lock again: acquired %v, %v; want refused", acquired, err)
	}
	if ttl < 0 || ttl > lease.Milliseconds() {
		t.Errorf("the head, asking again, reads %d ms; want the new TTL, from 0 to %d", ttl, lease.Milliseconds())
	}
	// Past the new expiry and the TryLock wait: the lock has expired (its
	// holder is gone), and a newcomer queues behind the live head instead
	// of evicting it and taking the lock.
	time.Sleep(time.Until(reentered.Add(lease + 500*time.Millisecond)))
	newcomer := newRedissonJava(node.Client(t), 2)
	if acquired, _, err := newcomer.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("a newcomer after the new expiry: acquired %v, %v; want queued behind the live head", acquired, err)
	}
	if acquired, _, err := first.fairLock(ctx, f.Key()); err != nil || !acquired {
		t.Fatalf("the head after the expiry: acquired %v, %v; want the lock", acquired, err)
	}
}
