package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

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

// TestRedissonFairQueueOldJavaWaiterTold: the configuration docs/redisson.md
// gives for names Java services lock with RFairLock. A Java thread of
// Redisson before 3.32.0 queues behind a Go FairMutex with
// WithRedissonFairQueue whose watchdog keeps the lock past the TTL the
// thread was told, so the thread ends up waiting for a message only; the Go
// Unlock tells it on its own channel and it takes the lock at once, not at
// a timer it no longer has.
func TestRedissonFairQueueOldJavaWaiterTold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 300*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "fair-old-java", WithRedissonFairQueue(0))
	l, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := &javaFairLockThread{j: newRedissonJava(node.Client(t), 7), acquired: make(chan struct{})}
	jctx, jcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); a.run(t, jctx, node, f.Key()) }()
	defer func() { jcancel(); <-done }()

	// Renewed past the 1 s the thread was told, until it waits for a
	// message only.
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
}
