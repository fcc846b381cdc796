package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry of a FairMutex hold on Redisson's queue with a shorter lease
// sets the lock's expiry to that lease, as an Extend to it does: the head of
// the queue, an RFairLock thread sleeping on the longer TTL it was told, is
// sent "0" on its own channel, and reads the new TTL when it asks again
// (every score moved earlier by as much), so that it does not sleep out the
// old lease should the holder die. A re-entry with a longer lease tells
// nobody.
func TestFairRedissonShorterReentryTellsHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, name := range []string{"reentry-shorter", "reentry-shorter:{7}"} {
		f := mustFair(t, c, name, WithRedissonFairQueue(time.Minute))
		j := newRedissonJava(node.Client(t), 1)
		head := j.fairChannel(f.Key())
		log := listen(t, node, head)

		outer, err := f.TryLockWithLease(ctx, 0, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if acquired, ttl, err := j.fairLock(ctx, f.Key()); err != nil || acquired || ttl < 15000 {
			t.Fatalf("%s: Java fair lock: acquired %v, ttl %d, %v; want refused for about 20 s", name, acquired, ttl, err)
		}
		longer, err := f.TryLockWithLease(outer, 0, 25*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		log.quiet(t, 300*time.Millisecond) // a later expiry
		const lease = 2 * time.Second
		inner, err := f.TryLockWithLease(outer, 0, lease)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := log.next(t, time.Second), head+" 0"; got != want {
			t.Errorf("%s: re-entry to an earlier expiry: heard %q, want %q", name, got, want)
		}
		acquired, ttl, err := j.fairLock(ctx, f.Key())
		if err != nil || acquired {
			t.Fatalf("%s: Java fair lock: acquired %v, %v; want refused", name, acquired, err)
		}
		if ttl > lease.Milliseconds() {
			t.Errorf("%s: the head of Redisson's fair queue, asking again on its wake, reads %d ms; want the new TTL, at most %d", name, ttl, lease.Milliseconds())
		}
		if err := f.Unlock(inner); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlock(longer); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	}
}
