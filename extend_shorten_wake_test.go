package scriptlock

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Extend that brings a lock's expiry forward announces it with Redisson's
// "0" on redisson_lock__channel:{name}: a Redisson waiter refused while the
// longer lease was in force sleeps on the TTL it read then, so without a
// word it would wait out the old lease should the holder die, long after
// the lock expired. The "0" makes it call again (and be refused: the lock is
// still held) and read the new TTL. An Extend that leaves the expiry later
// than before tells no one.
func TestExtendShorterLeaseAnnounced(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "shorten")
	log := listen(t, node, m.channel)

	lctx, err := m.TryLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := m.Extend(ctx, lctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := log.next(t, time.Second), m.channel+" 0"; got != want {
		t.Errorf("Extend to an earlier expiry: heard %q, want %q", got, want)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if got, want := log.next(t, time.Second), m.channel+" 0"; got != want {
		t.Errorf("Unlock: heard %q, want %q", got, want)
	}
}

// An RWMutex Extend (write side) or RExtend (read holds) that brings the
// lock's expiry forward publishes "1" on redisson_rwlock:{name}, as a read
// release that does so: waiters of every client, Go's and Redisson's, were
// told the longer TTL and would sleep on it.
func TestRWExtendShorterLeaseAnnounced(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "shorten")
	log := listen(t, node, rw.channel)
	heard := func(what string) {
		t.Helper()
		if got, want := log.next(t, time.Second), rw.channel+" 1"; got != want {
			t.Errorf("%s: heard %q, want %q", what, got, want)
		}
	}

	wctx, err := rw.TryLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Extend(ctx, wctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := rw.Extend(ctx, wctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	heard("write Extend to an earlier expiry")
	if err := rw.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	heard("write Unlock")

	rctx, err := rw.TryRLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RExtend(ctx, rctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := rw.RExtend(ctx, rctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	heard("RExtend to an earlier expiry")
}

// An Extend that brings the expiry forward also wakes the head of
// Redisson's fair queue (redisson_lock_queue:{name}), on its own channel
// redisson_lock__channel:{name}:<field>: an RFairLock waiter, queued on the
// same lock hash as a Mutex or a FairMutex, hears nothing on the lock's
// channel and slept on the longer TTL it was told.
func TestExtendShorterLeaseWakesRedissonFairHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		name string
		lock func(name string) (Locker, string, string)
	}{
		{"Mutex", func(name string) (Locker, string, string) {
			m := mustMutex(t, c, name)
			return m, m.key, m.channel
		}},
		{"FairMutex", func(name string) (Locker, string, string) {
			f := mustFair(t, c, name, WithRedissonFairQueue(time.Minute))
			return f, f.m.key, f.m.channel
		}},
	} {
		l, key, channel := tc.lock("fair-head-" + tc.name)
		head := channel + ":java-client:7"
		log := listen(t, node, head)
		lctx, err := l.(interface {
			TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error)
		}).TryLockWithLease(ctx, 0, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		node.Do(t, "RPUSH", redissonName("redisson_lock_queue", key), "java-client:7")
		if err := l.(Extender).Extend(ctx, lctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		log.quiet(t, 300*time.Millisecond) // a later expiry
		if err := l.(Extender).Extend(ctx, lctx, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if got, want := log.next(t, time.Second), head+" 0"; got != want {
			t.Errorf("%s: Extend to an earlier expiry: heard %q, want %q", tc.name, got, want)
		}
	}
}

// On a Cluster the announcement goes out on the lock's slot (SPUBLISH by
// default): every Extend that brings the expiry forward, of each kind,
// succeeds there and is heard by a sharded subscriber.
func TestExtendShorterLeaseAnnouncedCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	rc := cl.Client(t)
	c, err := New(rc, sharedPrefix(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "cl-mutex")
	rw := mustRW(t, c, "cl-rw")
	for _, tc := range []struct {
		what    string
		channel string
		msg     string
		lock    func() (context.Context, error)
		extend  func(lctx context.Context, d time.Duration) error
	}{
		{"Mutex", m.channel, "0", func() (context.Context, error) { return m.TryLockWithLease(ctx, 0, 20*time.Second) },
			func(lctx context.Context, d time.Duration) error { return m.Extend(ctx, lctx, d) }},
		{"RWMutex write", rw.channel, "1", func() (context.Context, error) { return rw.TryLockWithLease(ctx, 0, 20*time.Second) },
			func(lctx context.Context, d time.Duration) error { return rw.Extend(ctx, lctx, d) }},
	} {
		msgs := make(chan string, 8)
		subscribed := make(chan struct{})
		var once sync.Once
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		hook := rueidis.WithOnSubscriptionHook(sctx, func(rueidis.PubSubSubscription) { once.Do(func() { close(subscribed) }) })
		go func() {
			defer close(done)
			_ = rc.Receive(hook, rc.B().Ssubscribe().Channel(tc.channel).Build(), func(msg rueidis.PubSubMessage) { msgs <- msg.Message })
		}()
		<-subscribed
		lctx, err := tc.lock()
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.extend(lctx, 2*time.Second); err != nil {
			t.Errorf("%s: Extend to an earlier expiry: %v", tc.what, err)
		}
		select {
		case got := <-msgs:
			if got != tc.msg {
				t.Errorf("%s: heard %q, want %q", tc.what, got, tc.msg)
			}
		case <-time.After(time.Second):
			t.Errorf("%s: heard nothing on %s", tc.what, tc.channel)
		}
		cancel()
		<-done
	}
}

// The Unlock of a re-entry taken with a longer lease sets the lock's expiry
// back to the outer hold's lease: that brings it forward as an Extend to a
// shorter lease does, and is announced the same way, with "0" on the lock's
// channel and on the head of Redisson's fair queue's.
func TestNestedUnlockShorterLeaseAnnounced(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "nested")
	head := m.channel + ":java-client:7"
	log := listen(t, node, m.channel, head)

	outer, err := m.TryLockWithLease(ctx, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "RPUSH", redissonName("redisson_lock_queue", m.key), "java-client:7")
	inner, err := m.TryLockWithLease(outer, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := m.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{log.next(t, time.Second): true, log.next(t, time.Second): true}
	for _, want := range []string{m.channel + " 0", head + " 0"} {
		if !got[want] {
			t.Errorf("nested Unlock to an earlier expiry: heard %v, want %q", got, want)
		}
	}
	if err := m.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}

// An RWMutex write re-entry with a longer lease lengthens the lock; its
// Unlock sets the expiry back to the outer write lease and announces it with
// "1", as a write Extend to a shorter lease does.
func TestRWNestedUnlockShorterLeaseAnnounced(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "nested")
	log := listen(t, node, rw.channel)

	outer, err := rw.TryLockWithLease(ctx, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := rw.TryLockWithLease(outer, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := rw.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if got, want := log.next(t, time.Second), rw.channel+" 1"; got != want {
		t.Errorf("nested write Unlock to an earlier expiry: heard %q, want %q", got, want)
	}
	if err := rw.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}

// A FairMutex on Redisson's queue: the Unlock of a re-entry taken with a
// longer lease sets the expiry back to the outer lease and wakes the
// queue's head on its channel, as the Extend does.
func TestFairRedissonNestedUnlockShorterLeaseAnnounced(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "nested", WithRedissonFairQueue(time.Minute))
	head := f.m.channel + ":java-client:7"
	log := listen(t, node, head)

	outer, err := f.TryLockWithLease(ctx, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "RPUSH", f.queue, "java-client:7")
	node.Do(t, "ZADD", f.timeouts, strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10), "java-client:7")
	inner, err := f.TryLockWithLease(outer, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	log.quiet(t, 300*time.Millisecond) // a later expiry
	if err := f.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if got, want := log.next(t, time.Second), head+" 0"; got != want {
		t.Errorf("nested Unlock to an earlier expiry: heard %q, want %q", got, want)
	}
	if err := f.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}

// The head of Redisson's fair queue that asks again on its "0" reads its own
// estimate, score - threadWaitTime - now (RFairLock before 3.32.0, and
// WithRedissonFairQueue), not the lock's TTL: an Extend or a nested Unlock
// that brings the expiry forward moves every queued waiter's score earlier
// by as much, so that the head reads the new TTL and, should the holder die,
// does not sleep out the old lease.
func TestShorterLeaseRedissonFairHeadReadsNewTTL(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	type lockWithLease interface {
		Locker
		Extender
		TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error)
		Key() string
	}
	for i, tc := range []struct {
		name   string
		lock   func(name string) lockWithLease
		nested bool
	}{
		{"Mutex-Extend", func(n string) lockWithLease { return mustMutex(t, c, n) }, false},
		{"FairMutex-Extend", func(n string) lockWithLease { return mustFair(t, c, n, WithRedissonFairQueue(time.Minute)) }, false},
		{"Mutex-nested-Unlock", func(n string) lockWithLease { return mustMutex(t, c, n) }, true},
		{"FairMutex-nested-Unlock", func(n string) lockWithLease { return mustFair(t, c, n, WithRedissonFairQueue(time.Minute)) }, true},
	} {
		l := tc.lock("fair-head-ttl-" + tc.name)
		j := newRedissonJava(node.Client(t), int64(i+1))
		lease := 2 * time.Second
		outer, err := l.TryLockWithLease(ctx, 0, lease)
		if err != nil {
			t.Fatal(err)
		}
		held := outer
		if tc.nested {
			held, err = l.TryLockWithLease(outer, 0, 20*time.Second)
		} else {
			err = l.Extend(ctx, outer, 20*time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		// A Java RFairLock thread queues behind the longer lease.
		if acquired, ttl, err := j.fairLock(ctx, l.Key()); err != nil || acquired || ttl < 15000 {
			t.Fatalf("%s: Java fair lock: acquired %v, ttl %d, %v; want refused for about 20 s", tc.name, acquired, ttl, err)
		}
		if tc.nested {
			err = l.Unlock(held)
		} else {
			err = l.Extend(ctx, outer, lease)
		}
		if err != nil {
			t.Fatal(err)
		}
		// Woken by its "0", it asks again.
		acquired, ttl, err := j.fairLock(ctx, l.Key())
		if err != nil || acquired {
			t.Fatalf("%s: Java fair lock: acquired %v, %v; want refused", tc.name, acquired, err)
		}
		if ttl > lease.Milliseconds() {
			t.Errorf("%s: the head of Redisson's fair queue, asking again on its wake, reads %d ms; want the new TTL, at most %d", tc.name, ttl, lease.Milliseconds())
		}
		if err := l.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	}
}
