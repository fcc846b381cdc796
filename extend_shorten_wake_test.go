package scriptlock

import (
	"context"
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
	rc := redistest.Server(t).Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "shorten")

	msgs := make(chan string, 8)
	subscribed := make(chan struct{})
	var once sync.Once
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	rctx = rueidis.WithOnSubscriptionHook(rctx, func(rueidis.PubSubSubscription) { once.Do(func() { close(subscribed) }) })
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = rc.Receive(rctx, rc.B().Subscribe().Channel(m.channel).Build(), func(msg rueidis.PubSubMessage) { msgs <- msg.Message })
	}()
	<-subscribed

	lctx, err := m.TryLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, want bool) {
		t.Helper()
		select {
		case got := <-msgs:
			if !want || got != "0" {
				t.Errorf("%s: heard %q on %s, want nothing", what, got, m.channel)
			}
		case <-time.After(300 * time.Millisecond):
			if want {
				t.Errorf("%s: heard nothing on %s, want \"0\"", what, m.channel)
			}
		}
	}
	if err := m.Extend(ctx, lctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	expect("Extend to a later expiry", false)
	if err := m.Extend(ctx, lctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	expect("Extend to an earlier expiry", true)
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	expect("Unlock", true)
}
