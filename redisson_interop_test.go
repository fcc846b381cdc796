package scriptlock

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Each interop test runs on a plain name and on one that carries a hash tag
// (Redisson then adds no braces to its derived keys, except the latch
// channel, which always gets them).

// RWMutex and Redisson's RReadWriteLock: a Go writer's last unlock publishes
// READ_UNLOCK "1" (every Java waiter retries), so does a downgrade to read
// mode (readers may enter), and wake-ups work both ways.
func TestRedissonRWMutexInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	for _, name := range []string{"catalog", "cat:{7}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			rw := mustRW(t, c, name)
			key := rw.Key()
			channel := redissonName("redisson_rwlock", key)
			msgs := listen(t, node, channel)
			java := newRedissonJava(node.Client(t), 41)

			// Go writer: Java can neither read nor write; its last unlock says "1".
			w, err := rw.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ok, ttl, err := java.readLock(ctx, key); err != nil || ok || ttl <= 0 {
				t.Fatalf("Java read while Go writes: ok=%v ttl=%d err=%v", ok, ttl, err)
			}
			if ok, _, err := java.writeLock(ctx, key); err != nil || ok {
				t.Fatalf("Java write while Go writes: ok=%v err=%v", ok, err)
			}
			if err := rw.Unlock(w); err != nil {
				t.Fatal(err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 1" {
				t.Fatalf("Go write unlock published %q, want READ_UNLOCK 1", got)
			}

			// Downgrade: the writer keeps a read hold; "1" is published,
			// the lock is in read mode and Java readers may join.
			w, err = rw.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rw.RLock(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := rw.Unlock(w); err != nil {
				t.Fatal(err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 1" {
				t.Fatalf("Go downgrade published %q, want READ_UNLOCK 1", got)
			}
			msgs.quiet(t, 300*time.Millisecond)
			if mode, err := node.Do(t, "HGET", key, "mode").ToString(); err != nil || mode != "read" {
				t.Fatalf("mode after downgrade = %q, %v", mode, err)
			}
			if ok, _, err := java.readLock(ctx, key); err != nil || !ok {
				t.Fatalf("Java read after Go downgrade: ok=%v err=%v", ok, err)
			}
			if n, err := java.readUnlock(ctx, key); err != nil || n != 0 {
				t.Fatalf("Java read unlock beside a Go reader = %d, %v; want 0 (still locked)", n, err)
			}
			if err := rw.RUnlock(r); err != nil {
				t.Fatal(err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 0" {
				t.Fatalf("Go last read unlock published %q, want 0", got)
			}

			// Java writer: Go readers on two Clients wait and both wake on
			// Java's "1" (Java's lease is 30 s: only the message is this fast).
			if ok, _, err := java.writeLock(ctx, key); err != nil || !ok {
				t.Fatalf("Java write on a free lock: ok=%v err=%v", ok, err)
			}
			if _, err := rw.TryRLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("Go read while Java writes: %v", err)
			}
			var waits []func()
			for _, cl := range []*Client{c, c2} {
				h := mustRW(t, cl, name)
				waits = append(waits, within(t, 5*time.Second, "Go reader after Java write unlock", func() error {
					r, err := h.RLock(ctx)
					if err == nil {
						err = h.RUnlock(r)
					}
					return err
				}))
			}
			time.Sleep(200 * time.Millisecond)
			if n, err := java.writeUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("Java write unlock = %d, %v", n, err)
			}
			for _, wait := range waits {
				wait()
			}

			// Java reader: a Go writer waits and wakes on Java's "0".
			if ok, _, err := java.readLock(ctx, key); err != nil || !ok {
				t.Fatalf("Java read on a free lock: ok=%v err=%v", ok, err)
			}
			wait := within(t, 5*time.Second, "Go writer after Java read unlock", func() error {
				w, err := rw.Lock(ctx)
				if err == nil {
					err = rw.Unlock(w)
				}
				return err
			})
			time.Sleep(200 * time.Millisecond)
			if n, err := java.readUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("Java read unlock = %d, %v", n, err)
			}
			wait()

			// Go's force unlock of a Java write lock says "1", as Redisson's.
			if ok, _, err := java.writeLock(ctx, key); err != nil || !ok {
				t.Fatalf("Java write: ok=%v err=%v", ok, err)
			}
			fresh := listen(t, node, channel) // hears nothing published before
			if ok, err := rw.ForceUnlock(ctx); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
			if got := fresh.next(t, 3*time.Second); got != channel+" 1" {
				t.Fatalf("force unlock of a write lock published %q, want 1", got)
			}
		})
	}
}

// CountDownLatch and Redisson's RCountDownLatch: one channel,
// redisson_countdownlatch__channel__{<raw name>}, braces even on a
// hash-tagged name, and each side wakes the other's waiters.
func TestRedissonLatchInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"batch-7", "batch:{42}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			l := mustLatch(t, c, name)
			key := l.Key()
			channel := javaLatchChannel(key)
			msgs := listen(t, node, channel)
			java := newRedissonJava(node.Client(t), 7)

			// Go sets and counts down: a Java waiter hears "1", then "0".
			if ok, err := l.TrySetCount(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetCount = %v, %v", ok, err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 1" {
				t.Fatalf("Go TrySetCount published %q", got)
			}
			if err := java.latchCountDown(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := l.CountDown(ctx); err != nil {
				t.Fatal(err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 0" {
				t.Fatalf("zero published %q", got)
			}

			// Java sets and counts down: Go waiters wake on Java's "0",
			// sooner than the fallback timer could.
			if n, err := java.latchTrySet(ctx, key, 1); err != nil || n != 1 {
				t.Fatalf("Java trySetCount = %d, %v", n, err)
			}
			if n, err := l.Count(ctx); err != nil || n != 1 {
				t.Fatalf("Go sees count %d, %v", n, err)
			}
			wait := within(t, 10*time.Second, "Go Await", func() error { return l.Await(ctx) })
			time.Sleep(200 * time.Millisecond)
			if err := java.latchCountDown(ctx, key); err != nil {
				t.Fatal(err)
			}
			zero := time.Now()
			wait()
			if d := time.Since(zero); d > notifyFallback/2 {
				t.Fatalf("Go waiter woke %s after Java's zero: fallback, not the message", d)
			}

			// Go's Delete of a Java latch sends "0", which releases Java waiters.
			if n, err := java.latchTrySet(ctx, key, 5); err != nil || n != 1 {
				t.Fatalf("Java trySetCount = %d, %v", n, err)
			}
			for _, want := range []string{"1", "0", "1"} { // Java's set, zero and set again
				if got := msgs.next(t, 3*time.Second); got != channel+" "+want {
					t.Fatalf("Java published %q, want %q", got, want)
				}
			}
			if ok, err := l.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 0" {
				t.Fatalf("Delete published %q, want 0", got)
			}
		})
	}
}

// Semaphore and Redisson's RSemaphore: releases always publish the new count
// (also when it is zero or negative), and waiters wake both ways.
func TestRedissonSemaphoreInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"pdf", "pdf:{3}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			s := mustSem(t, c, name)
			key := s.Key()
			channel := redissonName("redisson_sc", key)
			msgs := listen(t, node, channel)
			java := newRedissonJava(node.Client(t), 9)

			if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			if got := msgs.next(t, 3*time.Second); got != channel+" 1" {
				t.Fatalf("TrySetPermits published %q", got)
			}
			if n, err := java.semAcquire(ctx, key, 1); err != nil || n != 1 {
				t.Fatalf("Java acquire = %d, %v", n, err)
			}
			if err := s.TryAcquire(ctx, 1, 0); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("Go acquire with no permit left = %v", err)
			}
			wait := within(t, 10*time.Second, "Go Acquire", func() error { return s.Acquire(ctx, 1) })
			time.Sleep(200 * time.Millisecond)
			if v, err := java.semRelease(ctx, key, 1); err != nil || v != 1 {
				t.Fatalf("Java release = %d, %v", v, err)
			}
			released := time.Now()
			wait()
			if d := time.Since(released); d > notifyFallback/2 {
				t.Fatalf("Go waiter took the permit %s after Java's release: fallback, not the message", d)
			}

			// Go's releases publish whatever the count, as Redisson's do.
			msgs = listen(t, node, channel) // hears nothing published before
			if v, err := s.AddPermits(ctx, -3); err != nil || v != -3 {
				t.Fatalf("AddPermits(-3) = %d, %v", v, err)
			}
			if err := s.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"-3", "-2"} {
				if got := msgs.next(t, 3*time.Second); got != channel+" "+want {
					t.Fatalf("published %q, want %q", got, want)
				}
			}
			if v, err := java.semRelease(ctx, key, 2); err != nil || v != 0 {
				t.Fatalf("Java release = %d, %v", v, err)
			}
			if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
				t.Fatalf("Go sees %d permits, %v", n, err)
			}
		})
	}
}

// Semaphore.DrainPermits and Redisson's drainPermits leave the same count
// and return the same value from every starting count: a positive count is
// taken, a zero or negative one is set to 0 and returned as it was, and a
// semaphore never set stays unset.
func TestRedissonSemaphoreDrainParity(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	java := newRedissonJava(node.Client(t), 13)
	for _, start := range []string{"", "3", "0", "-3"} {
		name := "drain" + start
		goKey, javaKey := mustSem(t, c, name).Key(), mustSem(t, c, name+":java").Key()
		if start != "" {
			node.Do(t, "SET", goKey, start)
			node.Do(t, "SET", javaKey, start)
		}
		want, err := java.semDrain(ctx, javaKey)
		if err != nil {
			t.Fatalf("Java drain from %q: %v", start, err)
		}
		got, err := mustSem(t, c, name).DrainPermits(ctx)
		if err != nil {
			t.Fatalf("DrainPermits from %q: %v", start, err)
		}
		if got != want {
			t.Errorf("DrainPermits from %q = %d; Redisson's drainPermits returns %d", start, got, want)
		}
		goLeft, _ := node.Do(t, "GET", goKey).ToString()
		javaLeft, _ := node.Do(t, "GET", javaKey).ToString()
		if goLeft != javaLeft {
			t.Errorf("after DrainPermits from %q the count is %q; after Redisson's drainPermits %q", start, goLeft, javaLeft)
		}
	}
}

// PermitSemaphore and Redisson's RPermitExpirableSemaphore: permit ids are
// 16 raw bytes in Redis, so each side releases the other's permits, and
// waiters wake both ways.
func TestRedissonPermitSemaphoreInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"gpu", "gpu:{5}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			p := mustPermits(t, c, name)
			key := p.Key()
			timeouts := redissonSuffix(key, "timeout")
			java := newRedissonJava(node.Client(t), 11)
			if ok, err := p.TrySetPermits(ctx, 2); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}

			// A Java permit is 16 bytes in the timeout set; Go releases it.
			jid, err := java.permitAcquire(ctx, key, 30*time.Second)
			if err != nil || jid == "" {
				t.Fatalf("Java acquire = %q, %v", jid, err)
			}
			members, err := node.Do(t, "ZRANGE", timeouts, "0", "-1").AsStrSlice()
			if err != nil || len(members) != 1 || len(members[0]) != 16 {
				t.Fatalf("timeout set = %q, %v; want one 16-byte member", members, err)
			}
			if err := p.Release(ctx, jid); err != nil {
				t.Fatalf("Go release of a Java permit: %v", err)
			}

			// A Go permit is 16 bytes too; Java releases it.
			gid, err := p.Acquire(ctx, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			wire, _ := permitWire(gid)
			members, err = node.Do(t, "ZRANGE", timeouts, "0", "-1").AsStrSlice()
			if err != nil || len(members) != 1 || members[0] != string(wire) {
				t.Fatalf("timeout set = %q, %v; want the 16 bytes of %s", members, err, gid)
			}
			if n, err := java.permitRelease(ctx, key, gid); err != nil || n != 1 {
				t.Fatalf("Java release of a Go permit = %d, %v", n, err)
			}
			if err := p.Release(ctx, gid); !errors.Is(err, ErrUnknownPermit) {
				t.Fatalf("second release: %v", err)
			}

			// Java holds both permits: a Go waiter wakes on Java's release.
			var jids []string
			for range 2 {
				id, err := java.permitAcquire(ctx, key, 30*time.Second)
				if err != nil || id == "" {
					t.Fatalf("Java acquire = %q, %v", id, err)
				}
				jids = append(jids, id)
			}
			var got string
			wait := within(t, 10*time.Second, "Go Acquire", func() error {
				var err error
				got, err = p.Acquire(ctx, 30*time.Second)
				return err
			})
			time.Sleep(200 * time.Millisecond)
			if n, err := java.permitRelease(ctx, key, jids[0]); err != nil || n != 1 {
				t.Fatalf("Java release = %d, %v", n, err)
			}
			released := time.Now()
			wait()
			if d := time.Since(released); d > notifyFallback/2 {
				t.Fatalf("Go waiter took the permit %s after Java's release: fallback, not the message", d)
			}

			// A Java waiter hears Go's release on redisson_sc with the new count.
			msgs := listen(t, node, redissonName("redisson_sc", key))
			if err := p.Release(ctx, got); err != nil {
				t.Fatal(err)
			}
			if m := msgs.next(t, 3*time.Second); m != redissonName("redisson_sc", key)+" 1" {
				t.Fatalf("Go release published %q", m)
			}
			if id, err := java.permitAcquire(ctx, key, 30*time.Second); err != nil || id == "" {
				t.Fatalf("Java acquire after Go's release = %q, %v", id, err)
			}

			// An id that is not 32 hex digits is refused before Redis.
			before, _ := node.Do(t, "ZCARD", timeouts).AsInt64()
			for _, bad := range []string{"", "xyz", jids[1] + "00", "zz" + jids[1][2:]} {
				if err := p.Release(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("Release(%q): %v, want ErrInvalidArgument", bad, err)
				}
			}
			if after, _ := node.Do(t, "ZCARD", timeouts).AsInt64(); after != before {
				t.Fatalf("bad ids changed the timeout set: %d -> %d", before, after)
			}
		})
	}
}

// PermitSemaphore.AddPermits sends what Redisson's addPermits sends on
// redisson_sc: the number of permits added (a Java waiter's SemaphorePubSub
// lets that many local acquirers retry), nothing when permits are removed,
// and leaves the same count. A Go waiter wakes on it as on a release.
func TestRedissonPermitSemaphoreAddPermitsParity(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix) // another Go service
	java := newRedissonJava(node.Client(t), 15)
	for _, name := range []string{"slots", "slots:{7}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			p := mustPermits(t, c, name)
			goKey, javaKey := p.Key(), mustPermits(t, c, name+":java").Key()
			goCh, javaCh := redissonName("redisson_sc", goKey), redissonName("redisson_sc", javaKey)
			node.Do(t, "SET", goKey, "1")
			node.Do(t, "SET", javaKey, "1")
			goMsgs, javaMsgs := listen(t, node, goCh), listen(t, node, javaCh)
			for _, n := range []int64{2, -4, 3} {
				if err := java.permitAddPermits(ctx, javaKey, n); err != nil {
					t.Fatalf("Java addPermits(%d): %v", n, err)
				}
				if _, err := p.AddPermits(ctx, n); err != nil {
					t.Fatalf("AddPermits(%d): %v", n, err)
				}
				if n > 0 {
					want := strings.TrimPrefix(javaMsgs.next(t, 3*time.Second), javaCh+" ")
					if got := goMsgs.next(t, 3*time.Second); got != goCh+" "+want {
						t.Fatalf("AddPermits(%d) published %q; Redisson's addPermits publishes %q", n, got, want)
					}
				} else {
					javaMsgs.quiet(t, 200*time.Millisecond)
					goMsgs.quiet(t, 0)
				}
				goCount, _ := node.Do(t, "GET", goKey).ToString()
				javaCount, _ := node.Do(t, "GET", javaKey).ToString()
				if goCount != javaCount {
					t.Fatalf("after AddPermits(%d) the count is %q; after Redisson's addPermits %q", n, goCount, javaCount)
				}
			}

			// A Go waiter for a permit wakes on AddPermits' message.
			if _, err := p.AddPermits(ctx, -2); err != nil { // 2 -> 0
				t.Fatal(err)
			}
			var id string
			wait := within(t, 10*time.Second, "Go Acquire", func() error {
				var err error
				id, err = p.Acquire(ctx, 30*time.Second)
				return err
			})
			time.Sleep(200 * time.Millisecond)
			if v, err := mustPermits(t, c2, name).AddPermits(ctx, 1); err != nil || v != 1 {
				t.Fatalf("AddPermits(1) = %d, %v", v, err)
			}
			added := time.Now()
			wait()
			if d := time.Since(added); d > notifyFallback/2 {
				t.Fatalf("Go waiter took the permit %s after AddPermits: fallback, not the message", d)
			}
			if err := p.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FairMutex with WithRedissonFairQueue shares Redisson's RFairLock queue: with
// J1 holding and J2, G3, J4 queued in that order, J2 takes the lock from the
// queue (lowering every later score by threadWaitTime), and G3 still comes
// before J4, woken by J2's unlock message, not by a poll. G3's unlock wakes J4
// on J4's own channel.
func TestRedissonFairMutexInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	// A 30 s waiter timeout makes Go's safety poll 10 s: only a message can
	// wake G3 within the bound below.
	c := newTestClient(t, node.Client(t), WithRedissonFairQueue(0), WithWaiterTimeout(30*time.Second))
	for _, name := range []string{"report", "report:{9}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 40*time.Second)
			f := mustFair(t, c, name)
			key := f.Key()
			queue := redissonName("redisson_lock_queue", key)
			jvmA, jvmB := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 1)
			j1, j2 := jvmA, jvmA
			j2.thread = 2
			j4 := jvmB
			j4.thread = 4
			msgs := listen(t, node, j2.fairChannel(key), j4.fairChannel(key))

			if ok, _, err := j1.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
			}
			if ok, _, err := j2.fairLock(ctx, key); err != nil || ok {
				t.Fatalf("J2 should queue: ok=%v err=%v", ok, err)
			}
			g3Owner := "g3"
			acquired := make(chan time.Time, 1)
			release := make(chan struct{})
			g3 := within(t, 30*time.Second, "G3", func() error {
				lctx, err := f.Lock(WithOwner(ctx, g3Owner))
				if err != nil {
					return err
				}
				acquired <- time.Now()
				select { // ctx ends at cleanup, should the test fail before release
				case <-release:
				case <-ctx.Done():
				}
				return f.Unlock(lctx)
			})
			waitFor(t, 5*time.Second, "G3 queued", func() bool {
				n, _ := node.Do(t, "LLEN", queue).AsInt64()
				return n == 2
			})
			if ok, _, err := j4.fairLock(ctx, key); err != nil || ok {
				t.Fatalf("J4 should queue: ok=%v err=%v", ok, err)
			}
			order, _ := node.Do(t, "LRANGE", queue, "0", "-1").AsStrSlice()
			want := []string{j2.lockName(), c.ID() + ":" + g3Owner, j4.lockName()}
			if strings.Join(order, ",") != strings.Join(want, ",") {
				t.Fatalf("queue = %v, want %v", order, want)
			}

			// J1 unlocks: J2, first in line, is told on its own channel.
			if n, err := j1.fairUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("J1 unlock = %d, %v", n, err)
			}
			if m := msgs.next(t, 3*time.Second); m != j2.fairChannel(key)+" 0" {
				t.Fatalf("J1's unlock message %q, want 0 to J2", m)
			}
			if ok, _, err := j2.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J2 from the queue: ok=%v err=%v", ok, err)
			}
			// J2 unlocks: G3 is next, its place kept through J2's score rewrite.
			if n, err := j2.fairUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("J2 unlock = %d, %v", n, err)
			}
			unlocked := time.Now()
			if ok, _, err := j4.fairLock(ctx, key); err != nil || ok {
				t.Fatalf("J4 overtook G3: ok=%v err=%v", ok, err)
			}
			select {
			case at := <-acquired:
				if d := at.Sub(unlocked); d > 5*time.Second {
					t.Fatalf("G3 took the lock %s after J2's unlock: polled, not woken", d)
				}
			case <-time.After(8 * time.Second):
				t.Fatal("G3 did not get the lock after J2's unlock")
			}
			if ok, _, err := j4.fairLock(ctx, key); err != nil || ok {
				t.Fatalf("J4 while G3 holds: ok=%v err=%v", ok, err)
			}
			close(release)
			g3()
			// G3's unlock wakes J4 on its own channel; J4 then gets the lock.
			if m := msgs.next(t, 3*time.Second); m != j4.fairChannel(key)+" 0" {
				t.Fatalf("G3's unlock message %q, want 0 to J4", m)
			}
			if ok, _, err := j4.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J4 after G3: ok=%v err=%v", ok, err)
			}
			// Java re-enters; Go is refused and, with no wait, does not queue.
			if ok, _, err := j4.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J4 re-entry: ok=%v err=%v", ok, err)
			}
			if _, err := f.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("Go TryLock while J4 holds: %v", err)
			}
			for _, want := range []int64{0, 1} {
				if n, err := j4.fairUnlock(ctx, key); err != nil || n != want {
					t.Fatalf("J4 unlock = %d, %v; want %d", n, err, want)
				}
			}
			if n, _ := node.Do(t, "EXISTS", key, queue, redissonName("redisson_lock_timeout", key)).AsInt64(); n != 0 {
				t.Fatalf("%d keys left behind", n)
			}
		})
	}
}

// A Go waiter that gives up leaves Redisson's queue as RFairLock's
// acquireFailed does: later waiters' scores drop by its waitTime, and a Java
// waiter behind it is next.
func TestRedissonFairMutexGiveUp(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithRedissonFairQueue(0))
	ctx := testCtx(t, 20*time.Second)
	f := mustFair(t, c, "giveup")
	key := f.Key()
	timeouts := redissonName("redisson_lock_timeout", key)
	j1, j3 := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 3)
	if ok, _, err := j1.fairLock(ctx, key); err != nil || !ok {
		t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
	}
	// Long enough that J3 has queued behind G2 before G2 gives up on a
	// loaded machine: a leave before J3 queued moves no score of J3's.
	const wait = 2 * time.Second
	done := within(t, 10*time.Second, "Go TryLock", func() error {
		_, err := f.TryLock(WithOwner(ctx, "g2"), wait)
		if !errors.Is(err, ErrNotAcquired) {
			return fmt.Errorf("TryLock = %v, want ErrNotAcquired", err)
		}
		return nil
	})
	waitFor(t, 3*time.Second, "G2 queued", func() bool {
		n, _ := node.Do(t, "ZCARD", timeouts).AsInt64()
		return n == 1
	})
	if ok, _, err := j3.fairLock(ctx, key); err != nil || ok {
		t.Fatalf("J3 should queue: ok=%v err=%v", ok, err)
	}
	before, err := node.Do(t, "ZSCORE", timeouts, j3.lockName()).AsFloat64()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := node.Do(t, "ZCARD", timeouts).AsInt64(); n != 2 {
		t.Fatalf("%d waiters queued once J3 queued, want G2 and J3 (G2 gave up first: the machine took over %s)", n, wait)
	}
	done()
	// The leave goes on in the background once the wait has run out past
	// its allowance (on a loaded machine): read until it has come, for up
	// to 10 s (CI's load has taken more than 3).
	after := before
	waitFor(t, 10*time.Second, "G2's leave", func() bool {
		after, err = node.Do(t, "ZSCORE", timeouts, j3.lockName()).AsFloat64()
		return err == nil && after != before
	})
	if got := int64(before - after); got != wait.Milliseconds() {
		t.Fatalf("J3's score dropped by %d ms when G2 left, want its waitTime %d", got, wait.Milliseconds())
	}
	if order, _ := node.Do(t, "LRANGE", redissonName("redisson_lock_queue", key), "0", "-1").AsStrSlice(); len(order) != 1 || order[0] != j3.lockName() {
		t.Fatalf("queue after G2 left = %v", order)
	}

	// Go's ForceUnlock of J1's lock tells J3, now first, on its channel.
	msgs := listen(t, node, j3.fairChannel(key))
	if ok, err := f.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	if m := msgs.next(t, 3*time.Second); m != j3.fairChannel(key)+" 0" {
		t.Fatalf("force unlock message %q, want 0 to J3", m)
	}
	if ok, _, err := j3.fairLock(ctx, key); err != nil || !ok {
		t.Fatalf("J3 after force unlock: ok=%v err=%v", ok, err)
	}
}

// Without WithRedissonFairQueue, FairMutex queues under its own keys: a Java
// RFairLock on the same name still excludes it through the shared lock hash,
// neither queue holds the other's waiters, and a Go waiter gets the lock
// after Java's unlock within its poll interval (Java does not message it).
func TestFairMutexNativeBesideRedisson(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(300*time.Millisecond))
	for _, name := range []string{"mixed", "mixed:{4}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			f := mustFair(t, c, name)
			key := f.Key()
			rq := redissonName("redisson_lock_queue", key)
			j1, j2 := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)

			if ok, _, err := j1.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
			}
			if _, err := f.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("Go TryLock while Java holds: %v", err)
			}
			got := within(t, 10*time.Second, "Go Lock", func() error {
				lctx, err := f.Lock(WithOwner(ctx, "g"))
				if err != nil {
					return err
				}
				// Java is refused while Go holds, and queues in its own queue.
				if ok, _, err := j2.fairLock(ctx, key); err != nil || ok {
					return fmt.Errorf("J2 while Go holds: ok=%v err=%v", ok, err)
				}
				return f.Unlock(lctx)
			})
			waitFor(t, 3*time.Second, "Go queued", func() bool {
				n, _ := node.Do(t, "LLEN", f.queue).AsInt64()
				return n == 1
			})
			if n, _ := node.Do(t, "EXISTS", rq).AsInt64(); n != 0 {
				t.Fatal("a Go waiter appeared in Redisson's queue")
			}
			if n, err := j1.fairUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("J1 unlock = %d, %v", n, err)
			}
			got()
			if order, _ := node.Do(t, "LRANGE", rq, "0", "-1").AsStrSlice(); len(order) != 1 || order[0] != j2.lockName() {
				t.Fatalf("Redisson's queue = %v, want only J2", order)
			}
			if n, _ := node.Do(t, "EXISTS", f.queue).AsInt64(); n != 0 {
				t.Fatal("Go's queue not empty after the Go waiter got the lock")
			}
			// Go released: J2, first in Redisson's queue, gets the lock.
			if ok, _, err := j2.fairLock(ctx, key); err != nil || !ok {
				t.Fatalf("J2 after Go: ok=%v err=%v", ok, err)
			}
			if n, err := j2.fairUnlock(ctx, key); err != nil || n != 1 {
				t.Fatalf("J2 unlock = %d, %v", n, err)
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// On a cluster, Redisson's queue protocol keeps every key of a name in one
// slot (hash-tagged names too), and waiters are woken in order on their
// sharded channels.
func TestRedissonFairMutexCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	// A 30 s waiter timeout makes the safety poll 10 s: only messages can
	// hand the lock on within the bound below.
	opts := []Option{prefix, WithRedissonFairQueue(0), WithWaiterTimeout(30 * time.Second)}
	c1 := newTestClient(t, cl.Client(t), opts...)
	c2 := newTestClient(t, cl.Client(t), opts...)
	c3 := newTestClient(t, cl.Client(t), opts...)
	ctx := testCtx(t, 30*time.Second)
	for _, name := range []string{"order:1", "user:{42}:wallet"} {
		f1, f2, f3 := mustFair(t, c1, name), mustFair(t, c2, name), mustFair(t, c3, name)
		node := cl.NodeFor(t, f1.queue)
		l1, err := f1.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock: %v", name, err)
		}
		got := make(chan int, 2)
		var waits []func()
		for i, f := range []*FairMutex{f2, f3} {
			waits = append(waits, within(t, 20*time.Second, name, func() error {
				l, err := f.Lock(ctx)
				if err != nil {
					return err
				}
				got <- i
				return f.Unlock(l)
			}))
			waitFor(t, 5*time.Second, name+" queued", func() bool {
				n, _ := node.Do(t, "LLEN", f1.queue).AsInt64()
				return n == int64(i+1)
			})
		}
		start := time.Now()
		if err := f1.Unlock(l1); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
		for _, w := range waits {
			w()
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: hand-offs took %s: waiters not woken by their sharded channels", name, d)
		}
		if a, b := <-got, <-got; a != 0 || b != 1 {
			t.Fatalf("%s: order %d, %d", name, a, b)
		}
	}
}

// Mutex fencing tokens and Redisson's RFencedLock share
// redisson_lock_token:{name}: tokens rise across both sides (Redisson also
// draws one on re-entry, Go does not).
func TestRedissonFencingInterop(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"ledger", "ledger:{8}"} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			m := mustMutex(t, c, name)
			key := m.Key()
			java := newRedissonJava(node.Client(t), 5)
			var last int64
			rise := func(who string, token int64) {
				t.Helper()
				if token <= last {
					t.Fatalf("%s token %d, not above %d", who, token, last)
				}
				last = token
			}
			for range 2 {
				tok, err := java.fencedLock(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				rise("Java", tok)
				tok, err = java.fencedLock(ctx, key) // re-entry draws again
				if err != nil {
					t.Fatal(err)
				}
				rise("Java re-entry", tok)
				if tok, err := newRedissonJava(node.Client(t), 6).fencedLock(ctx, key); err != nil || tok != -1 {
					t.Fatalf("other Java thread while held: %d, %v", tok, err)
				}
				for _, want := range []int64{0, 1} {
					if n, err := java.unlock(ctx, key); err != nil || n != want {
						t.Fatalf("Java unlock = %d, %v; want %d", n, err, want)
					}
				}
				lctx, err := m.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				gtok, ok := Fence(lctx)
				if !ok {
					t.Fatal("no Go token")
				}
				rise("Go", gtok)
				if tok, err := java.fencedLock(ctx, key); err != nil || tok != -1 {
					t.Fatalf("Java while Go holds: %d, %v", tok, err)
				}
				if err := m.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A FairMutex whose waiters would queue apart from Java's RFairLock waiters
// on the same name says so in the log, and says nothing while only its own
// protocol queues there. A Client checks a name at most once a minute, not
// once per handle: handles are often made per request.
func TestFairMutexMixedQueuesLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := testCtx(t, 20*time.Second)
	java1, java2 := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)

	for _, redisson := range []bool{false, true} {
		opts := []Option{prefix, WithLogger(logger)}
		if redisson {
			opts = append(opts, WithRedissonFairQueue(0))
		}
		c := newTestClient(t, node.Client(t), opts...)
		other := newTestClient(t, node.Client(t), prefix, WithLogger(slog.New(slog.DiscardHandler)))
		name := fmt.Sprintf("mixed-log-%v", redisson)

		// Only this handle's protocol queues: nothing is logged.
		f := mustFair(t, c, name)
		if ok, _, err := java1.fairLock(ctx, f.Key()); err != nil || !ok {
			t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
		}
		if _, err := f.TryLock(ctx, 100*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("TryLock while J1 holds: %v", err)
		}
		if strings.Contains(logs.String(), name) {
			t.Fatalf("logged without a mix: %s", logs.String())
		}

		// The other protocol has a waiter: the next check, a minute later
		// (here now: the Client's record is cleared), logs it once.
		for i := range c.mixedChecked {
			c.mixedChecked[i].Store(0)
		}
		nativeDone := func() {}
		if redisson {
			nativeDone = within(t, 10*time.Second, "native waiter", func() error {
				_, err := mustFair(t, other, name).TryLock(ctx, 1500*time.Millisecond)
				if !errors.Is(err, ErrNotAcquired) {
					return fmt.Errorf("native TryLock: %v", err)
				}
				return nil
			})
			waitFor(t, 3*time.Second, "native waiter queued", func() bool {
				n, _ := node.Do(t, "LLEN", redissonName("scriptlock_fair_queue", f.Key())).AsInt64()
				return n == 1
			})
		} else if ok, _, err := java2.fairLock(ctx, f.Key()); err != nil || ok {
			t.Fatalf("J2 should queue: ok=%v err=%v", ok, err)
		}
		f = mustFair(t, c, name)
		for range 2 {
			if _, err := f.TryLock(ctx, 100*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("TryLock while J1 holds: %v", err)
			}
		}
		if n := strings.Count(logs.String(), "lock="+name+" "); n != 1 {
			t.Fatalf("mixed queues logged %d times, want once:\n%s", n, logs.String())
		}
		// Fresh handles within the minute neither read nor log again.
		before := commandCalls(t, node)["evalsha_ro"]
		for range 2 {
			if _, err := mustFair(t, c, name).TryLock(ctx, 100*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("TryLock while J1 holds: %v", err)
			}
		}
		if n := commandCalls(t, node)["evalsha_ro"] - before; n != 0 {
			t.Fatalf("fresh handles checked for the other protocol %d times within a minute, want 0", n)
		}
		if n := strings.Count(logs.String(), "lock="+name+" "); n != 1 {
			t.Fatalf("mixed queues logged %d times, want once:\n%s", n, logs.String())
		}
		nativeDone()
		if n, err := java1.fairUnlock(ctx, f.Key()); err != nil || n != 1 {
			t.Fatalf("J1 unlock = %d, %v", n, err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent loggers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A FairMutex's ForceUnlock tells the first waiter of both queue protocols,
// not only its own: a name whose waiters queue by both (a rollout moving a
// fleet to WithRedissonFairQueue, or the misconfiguration the Client logs)
// must not leave the other protocol's first waiter asleep beside a free lock.
func TestFairMutexForceUnlockTellsBothQueues(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	// A long waiter timeout: a waiter nobody tells calls again only after a
	// third of it, well past the bounds below.
	native := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(30*time.Second))
	redisson := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(30*time.Second), WithRedissonFairQueue(0))
	j1, j2 := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)

	t.Run("native handle tells Redisson's first waiter", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		f := mustFair(t, native, "force-both-native")
		key := f.Key()
		if ok, _, err := j1.fairLock(ctx, key); err != nil || !ok {
			t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
		}
		if ok, _, err := j2.fairLock(ctx, key); err != nil || ok {
			t.Fatalf("J2 should queue: ok=%v err=%v", ok, err)
		}
		log := listen(t, node, j2.fairChannel(key))
		if ok, err := f.ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		if m, want := log.next(t, 2*time.Second), j2.fairChannel(key)+" 0"; m != want {
			t.Fatalf("message %q, want Redisson's \"0\" to J2: %q", m, want)
		}
		if ok, _, err := j2.fairLock(ctx, key); err != nil || !ok {
			t.Fatalf("J2 after the force unlock: ok=%v err=%v", ok, err)
		}
		if n, err := j2.fairUnlock(ctx, key); err != nil || n != 1 {
			t.Fatalf("J2 unlock = %d, %v", n, err)
		}
	})

	t.Run("Redisson-queue handle tells a native waiter", func(t *testing.T) {
		ctx := testCtx(t, 20*time.Second)
		name := "force-both-redisson"
		f := mustFair(t, redisson, name)
		key := f.Key()
		if ok, _, err := j1.fairLock(ctx, key); err != nil || !ok {
			t.Fatalf("J1 lock: ok=%v err=%v", ok, err)
		}
		waiter := mustFair(t, native, name)
		var forcedAt atomic.Int64
		got := within(t, 8*time.Second, "native waiter", func() error {
			lctx, err := waiter.TryLock(ctx, 7*time.Second)
			if err != nil {
				return err
			}
			if d := time.Since(time.Unix(0, forcedAt.Load())); d > 2*time.Second {
				return fmt.Errorf("native waiter got the lock %s after the force unlock, want it told at once", d)
			}
			return waiter.Unlock(lctx)
		})
		waitFor(t, 3*time.Second, "native waiter queued", func() bool {
			n, _ := node.Do(t, "LLEN", redissonName("scriptlock_fair_queue", key)).AsInt64()
			return n == 1
		})
		forcedAt.Store(time.Now().UnixNano())
		if ok, err := f.ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		got()
	})
}
