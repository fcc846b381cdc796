package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read release that brings the lock's expiry forward to the leases of the
// read holds left (here a Redisson reader's short one, which no scriptlock
// Client will end) tells the waiters: they were told the old remaining lease
// and slept past the new expiry (up to a third of the waiter timeout) while
// the lock was free.
func TestRWMutexReadReleaseShorterExpiryWakes(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	holder := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw:shorter")
	wc := newTestClient(t, node.Client(t), prefix)
	// A long waiter timeout: a waiter's fallback timer is a third of it.
	waiter := mustRW(t, wc, "rw:shorter", WithWaiterTimeout(60*time.Second))
	long, err := holder.RLockWithLease(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	java := newRedissonJava(node.Client(t), 1)
	key := holder.Key()
	got := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(ctx)
		got <- err
	}()
	waitFor(t, 10*time.Second, "the writer waits", func() bool { return waitersOn(wc, waiter.channel) == 1 })
	time.Sleep(300 * time.Millisecond) // subscribed and asleep
	// A Redisson reader with a lease of a second, which no Client ends.
	if ok, _, err := nilOrTTL(java.eval(ctx, javaReadLock, []string{key, java.readTimeoutPrefix(key)}, "1000", java.lockName(), java.lockName()+":write")); err != nil || !ok {
		t.Fatalf("Redisson read lock: %v %v", ok, err)
	}
	start := time.Now()
	if err := holder.RUnlock(long); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(8 * time.Second):
		t.Fatalf("the writer still waits %s after a read release brought the lock's expiry forward to about 1s", time.Since(start).Round(time.Millisecond))
	}
}
