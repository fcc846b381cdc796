package scriptlock

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestLatchLifecycle(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	l := mustLatch(t, c, "batch")

	// Not counting: Await returns at once, CountDown does nothing.
	if err := l.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TrySetCount(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TrySetCount(0): %v", err)
	}
	if ok, err := l.TrySetCount(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if ok, err := l.TrySetCount(ctx, 5); err != nil || ok {
		t.Fatalf("TrySetCount while counting = %v, %v", ok, err)
	}
	if n, err := l.Count(ctx); err != nil || n != 2 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	if ok, err := l.AwaitTimeout(ctx, 30*time.Millisecond); err != nil || ok {
		t.Fatalf("AwaitTimeout while counting = %v, %v", ok, err)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.Count(ctx); n != 1 {
		t.Fatalf("Count = %d, want 1", n)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := node.Do(t, "EXISTS", l.Key()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("latch key left after reaching zero: %d, %v", n, err)
	}
	if ok, err := l.AwaitTimeout(ctx, time.Second); err != nil || !ok {
		t.Fatalf("AwaitTimeout at zero = %v, %v", ok, err)
	}
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
}

// Waiters on several Clients are all released by the message announcing zero,
// not by the fallback timer, and Redisson's messages go out on its channel.
func TestLatchAwaitNotified(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 10*time.Second)
	setter := newTestClient(t, node.Client(t), prefix)
	l := mustLatch(t, setter, "go")
	if _, err := l.TrySetCount(ctx, 3); err != nil {
		t.Fatal(err)
	}

	// Listen on the channel as a Java service would.
	raw := node.Client(t)
	msgs := make(chan string, 8)
	subscribed := make(chan struct{})
	var once sync.Once
	rctx := rueidis.WithOnSubscriptionHook(ctx, func(rueidis.PubSubSubscription) { once.Do(func() { close(subscribed) }) })
	go raw.Receive(rctx, raw.B().Subscribe().Channel("redisson_countdownlatch__channel__{"+l.Key()+"}").Build(), func(m rueidis.PubSubMessage) {
		msgs <- m.Message
	})
	<-subscribed

	var wg sync.WaitGroup
	woke := make(chan time.Time, 6)
	for range 6 {
		w := mustLatch(t, newTestClient(t, node.Client(t), prefix), "go")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Await(ctx); err != nil {
				t.Error(err)
			}
			woke <- time.Now()
		}()
	}
	time.Sleep(200 * time.Millisecond)
	for range 3 {
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	zero := time.Now()
	wg.Wait()
	close(woke)
	for at := range woke {
		if d := at.Sub(zero); d > notifyFallback/2 {
			t.Fatalf("a waiter woke %s after zero: polled, not notified", d)
		}
	}
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0", "1"} {
		select {
		case got := <-msgs:
			if got != want {
				t.Fatalf("channel message %q, want %q", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %q message on the latch channel", want)
		}
	}
}

func TestLatchCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	a := newTestClient(t, cl.Client(t), prefix)
	b := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	for _, name := range []string{"cl-latch", "{tag}latch"} {
		if _, err := mustLatch(t, a, name).TrySetCount(ctx, 2); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- mustLatch(t, b, name).Await(ctx) }()
		time.Sleep(100 * time.Millisecond)
		for range 2 {
			if err := mustLatch(t, a, name).CountDown(ctx); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(notifyFallback / 2):
			t.Fatalf("%s: waiter not released by the zero message", name)
		}
	}
}

// A CountDown whose reply is lost (its connection dropped after the server
// ran it) is made again, and the retry counts nothing twice: one worker's
// CountDown cannot release the waiters early.
func TestLatchCountDownReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	l := mustLatch(t, p.c, "count-down-retry")
	if ok, err := l.TrySetCount(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if err := l.CountDown(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	count := func() int64 { return countAt(t, p.node, l.key) }
	err := p.lostReply(t, func() bool { return count() == 1 }, func() error { return l.CountDown(ctx) })
	if err != nil {
		t.Fatalf("CountDown whose first reply was lost: %v, want success", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("count after the retried CountDown = %d, want 1 (counted once; 0 released the waiters early)", n)
	}
}
