package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster without sharded pub/sub, reached by a user whose ACL refuses
// COMMAND: a Client cannot ask, starts with SPUBLISH, and its first call
// that publishes fails at the SPUBLISH, after its writes, and is made again
// with PUBLISH. That repeat finds its own record and changes nothing, but
// must still publish: otherwise the waiters of other Clients (listening
// plainly, their SSUBSCRIBE refused) do not hear of the permit, the zero or
// the count, and sleep until their 2 s fallback.
func TestRepeatAfterRefusedPublishWakes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	setup := newTestClient(t, cl.Client(t), prefix) // publishes plainly after its first refusal
	fresh := func(t *testing.T) *Client {
		c := newTestClient(t, cl.Client(t), prefix)
		if !c.sharded() {
			t.Fatal("a new Client does not publish sharded")
		}
		return c
	}
	// wakes runs wait on Client w, then act once the waiter sleeps.
	wakes := func(t *testing.T, w *Client, channel string, wait, act func() error) {
		t.Helper()
		done := make(chan time.Time, 1)
		go func() {
			if err := wait(); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			done <- time.Now()
		}()
		waitFor(t, 10*time.Second, "the waiter registered", func() bool { return waitersOn(w, channel) == 1 })
		time.Sleep(300 * time.Millisecond) // subscribed (plainly) and asleep
		if err := act(); err != nil {
			t.Fatal(err)
		}
		// Counted from the call's return, its round trips left out (a
		// loaded machine's can take a good part of a second).
		acted := time.Now()
		select {
		case at := <-done:
			if d := at.Sub(acted); d > notifyFallback/2 {
				t.Fatalf("the waiter got through %s after the call returned: at its fallback, not woken by a message", d.Round(time.Millisecond))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter did not get through")
		}
	}
	t.Run("PermitSemaphore.Release", func(t *testing.T) {
		if _, err := mustPermits(t, setup, "release").TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		// An acquisition with no expired permit to reclaim publishes nothing.
		id, err := mustPermits(t, h, "release").Acquire(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		p := mustPermits(t, w, "release")
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error { return mustPermits(t, h, "release").Release(ctx, id) })
	})
	t.Run("PermitSemaphore.SetPermits", func(t *testing.T) {
		s := mustPermits(t, setup, "set")
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acquire(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		p := mustPermits(t, w, "set")
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error { return mustPermits(t, h, "set").SetPermits(ctx, 2) })
	})
	t.Run("Semaphore.TrySetPermits", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		s := mustSem(t, w, "tryset")
		wakes(t, w, s.channel, func() error { return s.Acquire(ctx, 1) }, func() error {
			_, err := mustSem(t, h, "tryset").TrySetPermits(ctx, 1)
			return err
		})
	})
	t.Run("CountDownLatch.CountDown", func(t *testing.T) {
		if _, err := mustLatch(t, setup, "countdown").TrySetCount(ctx, 1); err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		l := mustLatch(t, w, "countdown")
		wakes(t, w, l.channel, func() error { return l.Await(ctx) }, func() error {
			return mustLatch(t, h, "countdown").CountDown(ctx)
		})
	})
	t.Run("CountDownLatch.Delete", func(t *testing.T) {
		if _, err := mustLatch(t, setup, "delete").TrySetCount(ctx, 3); err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		l := mustLatch(t, w, "delete")
		wakes(t, w, l.channel, func() error { return l.Await(ctx) }, func() error {
			_, err := mustLatch(t, h, "delete").Delete(ctx)
			return err
		})
	})
	// A read release that brings the lock's expiry forward to a Redisson
	// reader's short lease tells the waiting writer, which was told the
	// longer lease that was left before.
	t.Run("RWMutex.RUnlock bringing the expiry forward", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		hr := mustRW(t, h, "rw-sooner")
		long, err := hr.RLockWithLease(ctx, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, w, "rw-sooner")
		wakes(t, w, rw.channel, func() error {
			_, err := rw.Lock(ctx)
			return err
		}, func() error {
			java := newRedissonJava(cl.Client(t), 1)
			key := hr.Key()
			if ok, _, err := nilOrTTL(java.eval(ctx, javaReadLock, []string{key, java.readTimeoutPrefix(key)}, "400", java.lockName(), java.lockName()+":write")); err != nil || !ok {
				t.Fatalf("Redisson read lock: %v %v", ok, err)
			}
			return hr.RUnlock(long)
		})
	})
	// A FairMutex attempt that finds the lock free behind a dead queue head
	// evicts it and tells the new head, a live waiter; its repeat evicts
	// nothing but must tell the head all the same.
	t.Run("FairMutex.TryLock evicting a dead head", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		// A long waiter timeout: a waiter that is not first in line calls
		// again every third of it.
		fw := mustFair(t, w, "fair-evict", WithWaiterTimeout(30*time.Second))
		rc := cl.Client(t)
		// A waiter that died, first in line: its deadline is set in the
		// past once the live waiter queued behind it.
		dead := "0f0e0d0c-0000-4000-8000-000000000000:dead"
		for _, cmd := range []rueidis.Completed{
			rc.B().Rpush().Key(fw.queue).Element(dead).Build(),
			rc.B().Zadd().Key(fw.timeouts).ScoreMember().ScoreMember(float64(time.Now().Add(time.Hour).UnixMilli()), dead).Build(),
		} {
			if err := rc.Do(ctx, cmd).Error(); err != nil {
				t.Fatal(err)
			}
		}
		wakes(t, w, fw.wake+":"+w.ID(), func() error {
			_, err := fw.Lock(ctx)
			return err
		}, func() error {
			if err := rc.Do(ctx, rc.B().Zadd().Key(fw.timeouts).ScoreMember().ScoreMember(1, dead).Build()).Error(); err != nil {
				return err
			}
			_, err := mustFair(t, h, "fair-evict").TryLock(ctx, 0)
			if !errors.Is(err, ErrNotAcquired) {
				return fmt.Errorf("TryLock behind a live waiter: %v, want ErrNotAcquired", err)
			}
			return nil
		})
	})
	// The undo of an acquisition whose reply was lost gives its permits
	// back; its repeat finds itself done and must announce them all the same.
	t.Run("Semaphore undo", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		hs := mustSem(t, h, "undo")
		// An attempt that took the semaphore's 2 permits, its reply lost.
		latch := hs.latch()
		rc := cl.Client(t)
		for _, cmd := range []rueidis.Completed{
			rc.B().Set().Key(hs.Key()).Value("0").Build(),
			rc.B().Set().Key(latch).Value("2").Px(time.Minute).Build(),
		} {
			if err := rc.Do(ctx, cmd).Error(); err != nil {
				t.Fatal(err)
			}
		}
		s := mustSem(t, w, "undo")
		wakes(t, w, s.channel, func() error { return s.Acquire(ctx, 2) }, func() error {
			given, err := hs.undoOnce(ctx, latch, 2)
			if err == nil && given != 2 {
				err = fmt.Errorf("undo gave back %d permits, want 2", given)
			}
			return err
		})
	})
	t.Run("PermitSemaphore undo", func(t *testing.T) {
		ps := mustPermits(t, setup, "permit-undo")
		if _, err := ps.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// The permit of an acquisition whose reply was lost.
		id, err := ps.Acquire(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		wire, _ := permitWire(id)
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		hp := mustPermits(t, h, "permit-undo")
		p := mustPermits(t, w, "permit-undo")
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error {
			// Refused at its SPUBLISH, and made again with PUBLISH within
			// the one call, as a Semaphore's undo is.
			record := h.recordKey("redisson_sc_latch", hp.Key())
			if err := hp.undoOnce(ctx, wire, record); err != nil {
				return err
			}
			if h.sharded() {
				return errors.New("the undo was not refused at its SPUBLISH")
			}
			return nil
		})
	})
	// An acquisition that reclaims permits whose lease ended announces them;
	// its repeat finds nothing left to reclaim and must announce them all
	// the same.
	t.Run("PermitSemaphore.TryAcquire reclaiming", func(t *testing.T) {
		ps := mustPermits(t, setup, "reclaim")
		if _, err := ps.TrySetPermits(ctx, 2); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for range 2 {
			id, err := ps.Acquire(ctx, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		p := mustPermits(t, w, "reclaim")
		rc := cl.Client(t)
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error {
			// Both leases end now, unannounced, as a dead holder's do.
			for _, id := range ids {
				wire, _ := permitWire(id)
				if err := rc.Do(ctx, rc.B().Zadd().Key(ps.timeouts).ScoreMember().ScoreMember(1, string(wire)).Build()).Error(); err != nil {
					return err
				}
			}
			_, err := mustPermits(t, h, "reclaim").TryAcquire(ctx, time.Minute, 0)
			return err
		})
	})
	// AvailablePermits reclaims permits whose lease ended and announces
	// them; its repeat must announce them all the same.
	t.Run("PermitSemaphore.AvailablePermits reclaiming", func(t *testing.T) {
		ps := mustPermits(t, setup, "available")
		if _, err := ps.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		id, err := ps.Acquire(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		p := mustPermits(t, w, "available")
		rc := cl.Client(t)
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error {
			wire, _ := permitWire(id)
			if err := rc.Do(ctx, rc.B().Zadd().Key(ps.timeouts).ScoreMember().ScoreMember(1, string(wire)).Build()).Error(); err != nil {
				return err
			}
			n, err := mustPermits(t, h, "available").AvailablePermits(ctx)
			if err == nil && n != 1 {
				err = fmt.Errorf("AvailablePermits = %d, want 1", n)
			}
			return err
		})
	})
	// An Extend of a permit whose lease ended reclaims it and announces it;
	// its repeat finds the permit gone and must announce it all the same.
	t.Run("PermitSemaphore.Extend after the lease", func(t *testing.T) {
		if _, err := mustPermits(t, setup, "extend-late").TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		w, h := newTestClient(t, cl.Client(t), prefix), fresh(t)
		ph := mustPermits(t, h, "extend-late")
		id, err := ph.Acquire(ctx, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		p := mustPermits(t, w, "extend-late")
		rc := cl.Client(t)
		wakes(t, w, p.channel, func() error {
			_, err := p.Acquire(ctx, time.Minute)
			return err
		}, func() error {
			wire, _ := permitWire(id)
			if err := rc.Do(ctx, rc.B().Zadd().Key(ph.timeouts).ScoreMember().ScoreMember(1, string(wire)).Build()).Error(); err != nil {
				return err
			}
			if err := ph.Extend(ctx, id, time.Minute); !errors.Is(err, ErrUnknownPermit) {
				return fmt.Errorf("Extend after the lease: %v, want ErrUnknownPermit", err)
			}
			return nil
		})
	})
	// A latch's TrySetCount announces the new count ("1"), which Redisson's
	// waiters listen for; its repeat finds its own record and must announce
	// it all the same.
	t.Run("CountDownLatch.TrySetCount", func(t *testing.T) {
		h := fresh(t)
		l := mustLatch(t, h, "tryset-count")
		raw := cl.Client(t)
		msgs := make(chan string, 8)
		subscribed := make(chan struct{})
		var once sync.Once
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rctx = rueidis.WithOnSubscriptionHook(rctx, func(rueidis.PubSubSubscription) { once.Do(func() { close(subscribed) }) })
		go func() {
			_ = raw.Receive(rctx, raw.B().Subscribe().Channel(l.channel).Build(), func(m rueidis.PubSubMessage) { msgs <- m.Message })
		}()
		<-subscribed
		if ok, err := l.TrySetCount(ctx, 2); err != nil || !ok {
			t.Fatalf("TrySetCount: %v, %v", ok, err)
		}
		select {
		case m := <-msgs:
			if m != "1" {
				t.Fatalf("message %q, want \"1\"", m)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("TrySetCount, made again after its SPUBLISH was refused, announced no new count")
		}
	})
	// The repeat answers what the first attempt found: a lease that had
	// ended is ErrPermitExpired, though that attempt failed at its publish.
	t.Run("PermitSemaphore.Release after the lease", func(t *testing.T) {
		if _, err := mustPermits(t, setup, "expired").TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		h := fresh(t)
		p := mustPermits(t, h, "expired")
		id, err := p.Acquire(ctx, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		if err := p.Release(ctx, id); !errors.Is(err, ErrPermitExpired) {
			t.Fatalf("Release after the lease ended, its first attempt refused at SPUBLISH: %v, want ErrPermitExpired", err)
		}
	})
}
