package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A woken semaphore waiter that gives up puts its unused wake back on its
// own channel without the subscriptions' lock (waitOn's deferred hand-over),
// then leaves. A message dispatched at that moment may have seen the channel
// empty just before the put-back: its send must not block, or it holds the
// lock forever, the leaving waiter waits for that lock, and the Client's
// pub/sub connection stops delivering (every later wake and release of the
// Client with it).
func TestCountedWakeDispatchRacingGiveUp(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(context.Background(), nil, "id", func() bool { return false }, func() bool { return false })
	cs := &channelSub{name: "ch", mode: wakeCounted}
	s.mu.Lock()
	behind := s.addLocked(cs, "", nil) // another waiter, which the wakes passed on reach
	s.mu.Unlock()
	stop := make(chan struct{})
	defer close(stop)
	giveUp := func() { // one waiter after another: woken, then its caller gives up
		for {
			s.mu.Lock()
			w := s.addLocked(cs, "", nil)
			s.mu.Unlock()
			select {
			case <-w.wake: // woken
			case <-stop:
				return
			}
			// waitOn's deferred hand-over of a wake it did not use.
			again := false
			select {
			case w.wake <- struct{}{}:
			default:
				again = true
			}
			s.leave(w)
			if again {
				s.passOn(w.sub)
			}
		}
	}
	go giveUp()
	go giveUp()
	go func() { // the other waiter keeps taking what reaches it
		for {
			select {
			case <-behind.wake:
			case <-stop:
				return
			}
		}
	}()
	dispatched := make(chan int, 1)
	go func() {
		n := 0
		for end := time.Now().Add(time.Second); time.Now().Before(end); n++ {
			s.dispatch(cs, rueidis.PubSubMessage{Channel: "ch", Message: "1"})
			s.dispatch(cs, rueidis.PubSubMessage{Channel: "ch", Message: "2"})
		}
		dispatched <- n
	}()
	select {
	case n := <-dispatched:
		t.Logf("%d dispatches while waiters gave up", 2*n)
	case <-time.After(10 * time.Second):
		t.Fatal("a message's dispatch blocked sending a wake to a waiter that put its own wake back while leaving: the subscriptions' lock is held for good")
	}
}
