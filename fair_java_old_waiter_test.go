package scriptlock

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// javaFairLockThread plays one Java thread in RFairLock.lock() of Redisson
// before 3.32.0 (RedissonLock.lock's loop around javaFairLock, the 2024
// acquisition script):
//
//	ttl = tryAcquire(); if ttl == null: held
//	subscribe(redisson_lock__channel:{name}:<lockName>)
//	loop: ttl = tryAcquire(); if ttl == null: held
//	      ttl >= 0: wait for a "0" or ttl; ttl < 0: wait for a "0" only
//
// An already-queued thread is answered score - threadWaitTime - now, which
// turns negative once the holder outlasts the TTL the thread was told.
type javaFairLockThread struct {
	j        redissonJava
	acquired chan struct{}
	mu       sync.Mutex
	msgOnly  bool // it waited for a message only (a negative reply)
}

func (a *javaFairLockThread) run(t *testing.T, ctx context.Context, node *redistest.Node, name string) {
	if ok, _, err := a.j.fairLock(ctx, name); err != nil || ok {
		if err != nil {
			t.Errorf("Java first tryAcquire: %v", err)
		} else {
			close(a.acquired)
		}
		return
	}
	wake := make(chan struct{}, 1)
	rc := node.Client(t)
	subscribed := make(chan struct{})
	var once sync.Once
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hook := rueidis.WithOnSubscriptionHook(sctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" {
			once.Do(func() { close(subscribed) })
		}
	})
	received := make(chan struct{})
	go func() {
		defer close(received)
		_ = rc.Receive(hook, rc.B().Subscribe().Channel(a.j.fairChannel(name)).Build(), func(m rueidis.PubSubMessage) {
			if m.Message == "0" { // LockPubSub's unlock message: one permit
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		})
	}()
	defer func() { cancel(); <-received }()
	select {
	case <-subscribed:
	case <-ctx.Done():
		return
	}
	for {
		ok, ttl, err := a.j.fairLock(ctx, name)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("Java tryAcquire: %v", err)
			}
			return
		}
		if ok {
			close(a.acquired)
			return
		}
		var timer <-chan time.Time
		if ttl >= 0 {
			timer = time.After(time.Duration(ttl) * time.Millisecond)
		} else {
			a.mu.Lock()
			a.msgOnly = true
			a.mu.Unlock()
		}
		select {
		case <-wake:
		case <-timer:
		case <-ctx.Done():
			return
		}
	}
}

// TestFairOldJavaWaiterTold: a Java RFairLock thread of Redisson before
// 3.32.0 queues behind a Go FairMutex whose watchdog keeps the lock past the
// TTL the thread was told, so the thread ends up waiting for a message only;
// the Go Unlock tells it on its own channel and it takes the lock at once.
// With Redisson's queue (WithRedissonFairQueue) the release tells Redisson's
// head as Redisson's does; with our own queue it tells Redisson's first two
// threads too: before, the thread waited beside the free lock for good.
func TestFairOldJavaWaiterTold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []LockOption
	}{
		{"own queue", nil},
		{"Redisson's queue", []LockOption{WithRedissonFairQueue(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 300*time.Millisecond))
			ctx := testCtx(t, 30*time.Second)
			f := mustFair(t, c, "fair-old-java", tc.opts...)
			l, err := f.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a := &javaFairLockThread{j: newRedissonJava(node.Client(t), 7), acquired: make(chan struct{})}
			jctx, jcancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); a.run(t, jctx, node, f.Key()) }()
			defer func() { jcancel(); <-done }()

			// Renewed past the 1 s the thread was told, until it waits for
			// a message only.
			deadline := time.Now().Add(10 * time.Second)
			for {
				a.mu.Lock()
				msgOnly := a.msgOnly
				a.mu.Unlock()
				if msgOnly {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the Java thread never waited for a message only: the test does not reach the case")
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := f.Unlock(l); err != nil {
				t.Fatal(err)
			}
			unlocked := time.Now()
			select {
			case <-a.acquired:
				if d := time.Since(unlocked); d > 2*time.Second {
					t.Errorf("the Java thread took the lock %v after the Go Unlock: not told", d)
				}
			case <-time.After(8 * time.Second):
				t.Fatal("the Java thread still waits 8 s after the Go Unlock, with the lock free: the release did not tell it")
			}
		})
	}
}

// TestFairReleasesTellJavaThreads: both releases of our queue protocol that
// free the lock (FairReleaseLast, the usual one, and FairRelease, for a
// release it cannot vouch for, a shared owner's or a repeat) send
// Redisson's "0" to the first two threads of Redisson's queue on the name,
// each on its own channel, and nothing to a third.
func TestFairReleasesTellJavaThreads(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	c := newTestClient(t, n.Client(t))
	f := mustFair(t, c, "fair-tell-java")
	ctx := testCtx(t, 20*time.Second)
	const owner = "99999999-0000-4000-8000-000000000000:1"
	threads := []string{"11111111-0000-4000-8000-000000000000:1", "11111111-0000-4000-8000-000000000000:2", "11111111-0000-4000-8000-000000000000:3"}
	paths := []struct {
		name    string
		release func() (int64, error)
	}{
		{"FairReleaseLast", func() (int64, error) {
			return generated.FairReleaseLast(ctx, n.Client(t), f.m.key, f.queue, f.timeouts, f.wake, f.javaQueue, f.m.channel, owner, "publish")
		}},
		{"FairRelease", func() (int64, error) {
			return generated.FairRelease(ctx, n.Client(t), f.m.key, f.queue, f.timeouts, f.wake, f.m.latch+":paths", f.m.fence, f.javaQueue, f.m.channel, DefaultLease, owner, "publish", time.Minute, false, true, 0, 0)
		}},
	}
	for _, p := range paths {
		if err := n.Do(t, "DEL", f.javaQueue).Error(); err != nil {
			t.Fatal(err)
		}
		if err := n.Do(t, "HSET", f.m.key, owner, "1").Error(); err != nil {
			t.Fatal(err)
		}
		if err := n.Do(t, append([]string{"RPUSH", f.javaQueue}, threads...)...).Error(); err != nil {
			t.Fatal(err)
		}
		heard := make(chan string, 8)
		sctx, cancel := context.WithCancel(ctx)
		rc := n.Client(t)
		subscribed := make(chan struct{})
		var once sync.Once
		hook := rueidis.WithOnSubscriptionHook(sctx, func(s rueidis.PubSubSubscription) {
			if s.Kind == "psubscribe" {
				once.Do(func() { close(subscribed) })
			}
		})
		received := make(chan struct{})
		go func() {
			defer close(received)
			_ = rc.Receive(hook, rc.B().Psubscribe().Pattern(f.m.channel+":*").Build(), func(m rueidis.PubSubMessage) {
				heard <- m.Channel + "=" + m.Message
			})
		}()
		<-subscribed
		st, err := p.release()
		if err != nil || st != 2 {
			t.Fatalf("%s: %d, %v; want 2 (released)", p.name, st, err)
		}
		var got []string
		for len(got) < 2 {
			select {
			case m := <-heard:
				got = append(got, m)
			case <-time.After(3 * time.Second):
				t.Fatalf("%s: heard %v, want the first two threads told", p.name, got)
			}
		}
		select {
		case m := <-heard:
			t.Errorf("%s: also heard %s", p.name, m)
		case <-time.After(200 * time.Millisecond):
		}
		cancel()
		<-received
		want := []string{f.m.channel + ":" + threads[0] + "=0", f.m.channel + ":" + threads[1] + "=0"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: heard %v, want %v", p.name, got, want)
		}
	}
}
