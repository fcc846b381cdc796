package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A TrySetCount whose reply was lost is made again; when the latch was
// counted down to zero (or deleted) in between, the repeat must not announce
// a new count: "1" closes a Redisson waiter's latch that the zero opened, and
// a waiter that had read the count before the zero then blocks in await
// until its timeout (for good without one) on a latch that is open.
func TestLatchTrySetRepeatAfterZeroAnnouncesNothing(t *testing.T) {
	t.Parallel()
	rc := redistest.Server(t).Client(t)
	ctx := testCtx(t, 30*time.Second)
	p := redistest.Prefix(t)
	latch, channel, record := p+"latch", "redisson_countdownlatch__channel__{"+p+"latch}", "redisson_countdownlatch_latch:{"+p+"latch}:set"
	nonce := "client:1"

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
		_ = rc.Receive(rctx, rc.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) { msgs <- m.Message })
	}()
	<-subscribed
	next := func(what string) string {
		t.Helper()
		select {
		case m := <-msgs:
			return m
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: no message", what)
		}
		return ""
	}

	if ok, err := generated.LatchTrySet(ctx, rc, latch, channel, record, 1, nonce, "publish", time.Minute); err != nil || !ok {
		t.Fatalf("LatchTrySet: %v, %v", ok, err)
	}
	if m := next("TrySetCount"); m != "1" {
		t.Fatalf("TrySetCount published %q, want \"1\"", m)
	}
	if _, err := generated.LatchCountDown(ctx, rc, latch, channel, record+"x", "publish", time.Minute); err != nil {
		t.Fatal(err)
	}
	if m := next("CountDown to zero"); m != "0" {
		t.Fatalf("CountDown published %q, want \"0\"", m)
	}
	// The repeat of the first call (its reply lost), after the zero.
	if ok, err := generated.LatchTrySet(ctx, rc, latch, channel, record, 1, nonce, "publish", time.Minute); err != nil || !ok {
		t.Fatalf("LatchTrySet repeated: %v, %v", ok, err)
	}
	select {
	case m := <-msgs:
		t.Fatalf("the repeat of TrySetCount, made after the latch reached zero, published %q: a Redisson waiter's open latch is closed again", m)
	case <-time.After(500 * time.Millisecond):
	}
}
