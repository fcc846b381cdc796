package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster without sharded pub/sub, reached by a user whose ACL refuses
// COMMAND (see TestRepeatAfterRefusedPublishWakes): a fresh Client's first
// call that publishes fails at its SPUBLISH, after its writes, and is made
// again with PUBLISH. A FairMutex's or RWMutex's release made so must
// still report what the first attempt did, give up no second hold, and tell
// the waiters the first attempt was to tell; the waiters here call Redis
// again only every 10 s on their own.
func TestFairRWReleaseAfterRefusedPublishWakes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 90*time.Second)
	slow := WithWaiterTimeout(30 * time.Second)
	setup := newTestClient(t, cl.Client(t), prefix, slow)
	fresh := func(t *testing.T) *Client {
		c := newTestClient(t, cl.Client(t), prefix, slow)
		if !c.sharded() {
			t.Fatal("a new Client does not publish sharded")
		}
		return c
	}
	// wakes starts wait on Client w, runs act once the waiter sleeps on
	// channel, and checks that the waiter gets through soon after.
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
		acted := time.Now()
		if err := act(); err != nil {
			t.Fatal(err)
		}
		select {
		case at := <-done:
			if d := at.Sub(acted); d > 3*time.Second {
				t.Fatalf("the waiter got through %s after the call: at its poll, not woken by a message", d.Round(time.Millisecond))
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the waiter did not get through")
		}
	}
	t.Run("FairMutex.Unlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hf := mustFair(t, h, "fair-unlock")
		lctx, err := hf.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fw := mustFair(t, w, "fair-unlock")
		wakes(t, w, fw.wake+":"+w.ID(), lockThenUnlock(ctx, fw.Lock, fw.Unlock), func() error { return hf.Unlock(lctx) })
	})
	// A Mutex's usual Unlock (MutexReleaseLast) is made again as
	// MutexRelease: it answers released and wakes the next Go waiter.
	t.Run("Mutex.Unlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hm := mustMutex(t, h, "mutex-unlock")
		lctx, err := hm.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mw := mustMutex(t, w, "mutex-unlock")
		wakes(t, w, mw.wake+":"+w.ID(), lockThenUnlock(ctx, mw.Lock, mw.Unlock), func() error { return hm.Unlock(lctx) })
	})
	// A nested Unlock that brings the lock's expiry forward publishes;
	// made again, it gives up no second hold.
	t.Run("Mutex nested Unlock", func(t *testing.T) {
		h := fresh(t)
		hm := mustMutex(t, h, "mutex-nested")
		outer, err := hm.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := hm.TryLockWithLease(outer, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := hm.Unlock(inner); err != nil {
			t.Fatalf("nested Unlock: %v", err)
		}
		if st, err := hm.State(WithOwner(ctx, ownerIn(outer))); err != nil || st.HoldCount != 1 {
			t.Fatalf("after the nested Unlock: %+v, %v; want the outer hold left", st, err)
		}
		if err := context.Cause(outer); err != nil {
			t.Fatalf("outer hold ended: %v", err)
		}
		if err := hm.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
	// A release of the last hold that cannot vouch for it (its lease may
	// have run out) latches its outcome: its repeat answers "released" from
	// the latch, not "not held".
	t.Run("Mutex release not vouched", func(t *testing.T) {
		h := fresh(t)
		m := mustMutex(t, h, "mutex-unvouched")
		if _, err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		rc := cl.Client(t)
		fields, err := rc.Do(ctx, rc.B().Hkeys().Key(m.key).Build()).AsStrSlice()
		if err != nil || len(fields) != 1 {
			t.Fatalf("lock fields %v, %v", fields, err)
		}
		field := fields[0]
		queue, timeouts := fairKeys(m.key, true)
		latch := m.latch + ":" + h.ID() + ":unvouched"
		release := func(publish string, retry bool) (int64, bool, error) {
			return generated.MutexRelease(ctx, rc, m.key, m.channel, latch, m.waiters, m.wake, m.fence, queue, timeouts, time.Minute, field, publish, 10*time.Second, retry, false, 0, retry)
		}
		if _, _, err := release("spublish", false); err == nil {
			t.Fatal("the first attempt's SPUBLISH was not refused")
		}
		if res, held, err := release("publish", true); err != nil || !held || res != 1 {
			t.Fatalf("the repeat answered %d, held %v, %v; want released (1)", res, held, err)
		}
	})
	t.Run("Mutex.ForceUnlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		if _, err := mustMutex(t, setup, "mutex-force").Lock(ctx); err != nil {
			t.Fatal(err)
		}
		mw := mustMutex(t, w, "mutex-force")
		wakes(t, w, mw.wake+":"+w.ID(), lockThenUnlock(ctx, mw.Lock, mw.Unlock), func() error {
			ok, err := mustMutex(t, h, "mutex-force").ForceUnlock(ctx)
			if err == nil && !ok {
				err = errors.New("ForceUnlock found no lock")
			}
			return err
		})
	})
	// A waiter that gave up after it was woken (no longer in the waiter
	// set) passes the wake on while the lock is free, also when its leave is
	// made again after a refused SPUBLISH.
	t.Run("Mutex waiter leaving", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		sm := mustMutex(t, setup, "mutex-leave")
		if _, err := sm.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		mw := mustMutex(t, w, "mutex-leave")
		rc := cl.Client(t)
		wakes(t, w, mw.wake+":"+w.ID(), lockThenUnlock(ctx, mw.Lock, mw.Unlock), func() error {
			// The lock ends (its lease ran out) without a release: only
			// the woken waiter that gives up is left to pass the wake on.
			if err := rc.Do(ctx, rc.B().Del().Key(sm.key).Build()).Error(); err != nil {
				return err
			}
			mustMutex(t, h, "mutex-leave").abandon(ctx, h.ID()+":gone", 0, 0)
			return nil
		})
	})
	// A queued head granted the lock with a lease shorter than a third of
	// the waiter timeout tells the next waiter, which would otherwise sleep
	// that third beside a lock whose lease ended long before; best effort,
	// also when the Client's SPUBLISH is refused.
	t.Run("FairMutex promoted head", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hf, fw := mustFair(t, h, "fair-promoted"), mustFair(t, w, "fair-promoted")
		// h's waiter is first in line, the lock free.
		rc := cl.Client(t)
		first := h.ID() + ":x"
		for _, cmd := range []rueidis.Completed{
			rc.B().Rpush().Key(hf.queue).Element(first).Build(),
			rc.B().Zadd().Key(hf.timeouts).ScoreMember().ScoreMember(float64(time.Now().Add(time.Hour).UnixMilli()), first).Build(),
		} {
			if err := rc.Do(ctx, cmd).Error(); err != nil {
				t.Fatal(err)
			}
		}
		wakes(t, w, fw.wake+":"+w.ID(), lockThenUnlock(ctx, fw.Lock, fw.Unlock), func() error {
			// Granted as the head with a 1 s lease, never released.
			_, err := hf.TryLockWithLease(WithOwner(ctx, "x"), 0, time.Second)
			return err
		})
	})
	// An Extend to a shorter lease announces the earlier expiry (Redisson's
	// waiters slept on the longer TTL); made again after its SPUBLISH was
	// refused, it finds the expiry it set and must announce it all the same.
	// hears runs act once a plain subscriber listens on channel, and wants
	// message want there.
	hears := func(t *testing.T, channel, want string, act func() error) {
		t.Helper()
		raw := cl.Client(t)
		msgs := make(chan string, 8)
		subscribed := make(chan struct{})
		var once sync.Once
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rctx = rueidis.WithOnSubscriptionHook(rctx, func(rueidis.PubSubSubscription) { once.Do(func() { close(subscribed) }) })
		go func() {
			_ = raw.Receive(rctx, raw.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) { msgs <- m.Message })
		}()
		<-subscribed
		if err := act(); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-msgs:
			if m != want {
				t.Fatalf("message %q, want %q", m, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the Extend to a shorter lease, made again after its SPUBLISH was refused, announced nothing")
		}
	}
	t.Run("Mutex.Extend shorter", func(t *testing.T) {
		m := mustMutex(t, fresh(t), "mutex-extend")
		lctx, err := m.TryLockWithLease(ctx, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		hears(t, m.channel, "0", func() error { return m.Extend(ctx, lctx, 20*time.Second) })
		if err := m.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RWMutex.Extend shorter", func(t *testing.T) {
		rw := mustRW(t, fresh(t), "rw-extend")
		lctx, err := rw.TryLockWithLease(ctx, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		hears(t, rw.channel, "1", func() error { return rw.Extend(ctx, lctx, 20*time.Second) })
		if err := rw.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RWMutex.RExtend shorter", func(t *testing.T) {
		rw := mustRW(t, fresh(t), "rw-rextend")
		lctx, err := rw.TryRLockWithLease(ctx, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		hears(t, rw.channel, "1", func() error { return rw.RExtend(ctx, lctx, 20*time.Second) })
		if err := rw.RUnlock(lctx); err != nil {
			t.Fatal(err)
		}
	})
	// On Redisson's queue, the first waiter listens on its own channel.
	t.Run("FairMutex.Unlock on Redisson's queue", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hf := mustFair(t, h, "rfair-unlock", WithRedissonFairQueue(0))
		lctx, err := hf.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fw := mustFair(t, w, "rfair-unlock", WithRedissonFairQueue(0))
		wctx := WithOwner(ctx, "w")
		wakes(t, w, fw.m.channel+":"+w.ID()+":w", func() error {
			l, err := fw.Lock(wctx)
			if err == nil {
				err = fw.Unlock(l)
			}
			return err
		}, func() error { return hf.Unlock(lctx) })
	})
	// A nested Unlock that brings the lock's expiry forward tells the
	// queue's head; made again, it gives up no second hold.
	t.Run("FairMutex nested Unlock on Redisson's queue", func(t *testing.T) {
		h := fresh(t)
		hf := mustFair(t, h, "rfair-nested", WithRedissonFairQueue(0))
		outer, err := hf.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := hf.TryLockWithLease(outer, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// A waiter queued behind the holder.
		rc := cl.Client(t)
		queued := newRedissonJava(rc, 7).lockName()
		for _, cmd := range []rueidis.Completed{
			rc.B().Rpush().Key(hf.queue).Element(queued).Build(),
			rc.B().Zadd().Key(hf.timeouts).ScoreMember().ScoreMember(float64(time.Now().Add(time.Hour).UnixMilli()), queued).Build(),
		} {
			if err := rc.Do(ctx, cmd).Error(); err != nil {
				t.Fatal(err)
			}
		}
		if err := hf.Unlock(inner); err != nil {
			t.Fatalf("nested Unlock: %v", err)
		}
		if st, err := hf.State(WithOwner(ctx, ownerIn(outer))); err != nil || st.HoldCount != 1 {
			t.Fatalf("after the nested Unlock: %+v, %v; want the outer hold left", st, err)
		}
		if err := context.Cause(outer); err != nil {
			t.Fatalf("outer hold ended: %v", err)
		}
		if err := hf.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RWMutex.Unlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hr := mustRW(t, h, "rw-unlock")
		lctx, err := hr.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, w, "rw-unlock")
		wakes(t, w, rw.channel, lockThenUnlock(ctx, rw.RLock, rw.RUnlock), func() error { return hr.Unlock(lctx) })
	})
	// A nested write Unlock that brings the lock's expiry forward publishes;
	// made again, it gives up no second hold.
	t.Run("RWMutex nested Unlock", func(t *testing.T) {
		h := fresh(t)
		hr := mustRW(t, h, "rw-nested")
		outer, err := hr.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := hr.TryLockWithLease(outer, 0, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := hr.Unlock(inner); err != nil {
			t.Fatalf("nested Unlock: %v", err)
		}
		if st, err := hr.State(outer); err != nil || st.Writes != 1 {
			t.Fatalf("after the nested Unlock: %+v, %v; want the outer write hold left", st, err)
		}
		if err := context.Cause(outer); err != nil {
			t.Fatalf("outer hold ended: %v", err)
		}
		if err := hr.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RWMutex.RUnlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		hr := mustRW(t, h, "rw-runlock")
		lctx, err := hr.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, w, "rw-runlock")
		wakes(t, w, rw.channel, lockThenUnlock(ctx, rw.Lock, rw.Unlock), func() error { return hr.RUnlock(lctx) })
	})
	// A waiting writer that gives up before it subscribed (a TryLock's
	// short wait) wakes the readers it held back.
	t.Run("RWMutex writer leaving", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		sr := mustRW(t, setup, "rw-leave")
		rctx, err := sr.RLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sr.RUnlock(rctx) }()
		hr := mustRW(t, h, "rw-leave")
		// The writer has waited a while already: its registration holds the
		// reader below back.
		hw := WithOwner(ctx, "writer")
		rc := cl.Client(t)
		if err := rc.Do(ctx, rc.B().Zadd().Key(hr.writers).ScoreMember().ScoreMember(float64(time.Now().Add(time.Minute).UnixMilli()), h.ID()+":writer:write").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, w, "rw-leave")
		wakes(t, w, rw.channel, lockThenUnlock(ctx, rw.RLock, rw.RUnlock), func() error {
			if _, err := hr.TryLock(hw, time.Millisecond); !errors.Is(err, ErrNotAcquired) {
				return fmt.Errorf("writer's TryLock = %v, want ErrNotAcquired", err)
			}
			// The leave goes on in the background once the wait has run
			// out past its allowance (on a loaded machine): read until it
			// has come.
			var n int64
			var err error
			if !eventually(3*time.Second, func() bool {
				n, err = rc.Do(ctx, rc.B().Zcard().Key(hr.writers).Build()).AsInt64()
				return err == nil && n == 0
			}) {
				return fmt.Errorf("%d writers registered after the writer left (%v)", n, err)
			}
			return nil
		})
	})
	// A first waiter that leaves a free lock (woken by a release, it gave
	// up) hands the wake-up to the next one, in either queue protocol,
	// also when its leave is made again after a refused SPUBLISH.
	for _, redisson := range []bool{false, true} {
		name := "FairMutex first waiter leaving"
		var opts []LockOption
		if redisson {
			name += " Redisson's queue"
			opts = append(opts, WithRedissonFairQueue(0))
		}
		t.Run(name, func(t *testing.T) {
			w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
			lock := "fair-leave"
			if redisson {
				lock = "rfair-leave"
			}
			hf, fw := mustFair(t, h, lock, opts...), mustFair(t, w, lock, opts...)
			// h's waiter is first in line, the lock free.
			rc := cl.Client(t)
			first := h.ID() + ":h"
			for _, cmd := range []rueidis.Completed{
				rc.B().Rpush().Key(hf.queue).Element(first).Build(),
				rc.B().Zadd().Key(hf.timeouts).ScoreMember().ScoreMember(float64(time.Now().Add(time.Hour).UnixMilli()), first).Build(),
			} {
				if err := rc.Do(ctx, cmd).Error(); err != nil {
					t.Fatal(err)
				}
			}
			channel := fw.wake + ":" + w.ID()
			if redisson {
				channel = fw.m.channel + ":" + w.ID() + ":x"
			}
			wakes(t, w, channel, func() error {
				l, err := fw.Lock(WithOwner(ctx, "x"))
				if err == nil {
					err = fw.Unlock(l)
				}
				return err
			}, func() error { return hf.leaveLate(ctx, first, -1) })
		})
	}
	// ForceUnlock tells the waiters, in every queue protocol, also when it
	// is made again after a refused SPUBLISH.
	t.Run("FairMutex.ForceUnlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		if _, err := mustFair(t, setup, "fair-force").Lock(ctx); err != nil {
			t.Fatal(err)
		}
		fw := mustFair(t, w, "fair-force")
		wakes(t, w, fw.wake+":"+w.ID(), lockThenUnlock(ctx, fw.Lock, fw.Unlock), func() error {
			ok, err := mustFair(t, h, "fair-force").ForceUnlock(ctx)
			if err == nil && !ok {
				err = errors.New("ForceUnlock found no lock")
			}
			return err
		})
	})
	t.Run("FairMutex.ForceUnlock Redisson's queue", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		if _, err := mustFair(t, setup, "rfair-force", WithRedissonFairQueue(0)).Lock(ctx); err != nil {
			t.Fatal(err)
		}
		fw := mustFair(t, w, "rfair-force", WithRedissonFairQueue(0))
		wakes(t, w, fw.m.channel+":"+w.ID()+":x", func() error {
			l, err := fw.Lock(WithOwner(ctx, "x"))
			if err == nil {
				err = fw.Unlock(l)
			}
			return err
		}, func() error {
			ok, err := mustFair(t, h, "rfair-force", WithRedissonFairQueue(0)).ForceUnlock(ctx)
			if err == nil && !ok {
				err = errors.New("ForceUnlock found no lock")
			}
			return err
		})
	})
	t.Run("RWMutex.ForceUnlock", func(t *testing.T) {
		w, h := newTestClient(t, cl.Client(t), prefix, slow), fresh(t)
		if _, err := mustRW(t, setup, "rw-force").Lock(ctx); err != nil {
			t.Fatal(err)
		}
		rw := mustRW(t, w, "rw-force")
		wakes(t, w, rw.channel, lockThenUnlock(ctx, rw.RLock, rw.RUnlock), func() error {
			ok, err := mustRW(t, h, "rw-force").ForceUnlock(ctx)
			if err == nil && !ok {
				err = errors.New("ForceUnlock found no lock")
			}
			return err
		})
	})
}

// lockThenUnlock is a waiter's whole turn: take the lock (waiting), then give
// it up.
func lockThenUnlock(ctx context.Context, lock func(context.Context) (context.Context, error), unlock func(context.Context) error) func() error {
	return func() error {
		l, err := lock(ctx)
		if err == nil {
			err = unlock(l)
		}
		return err
	}
}
