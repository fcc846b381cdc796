package scriptlock

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock's wait that saw the lock held, then subscribed to hear of its
// release, and whose SUBSCRIBE the server did not answer until the wait
// ended, ran out unanswered: a *NotAcquiredError with Unanswered, not one
// that says another owner held the lock while the server told nothing. A
// wait whose calls were all answered still reports the holder.
func TestTryLockSubscribeUnanswered(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if strings.HasPrefix(lc.name, "LeanMutex") {
			continue // polls: its wait subscribes to nothing
		}
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			p := newProxied(t)
			l := lc.make(t, p.c, "subscribe-unanswered")
			warm(t, l)
			holdDirect(t, p, lc, "subscribe-unanswered")
			subscribeUnanswered(t, p, "SUBSCRIBE", func(d time.Duration) error {
				_, err := l.TryLock(context.Background(), d)
				return err
			})
		})
	}
}

// The same for a FairMutex on Redisson's queue (its waiter's own channel),
// and for a Mutex held by a Redisson client, whose wait, subscribed to its
// wake channel, subscribes to Redisson's channel as well for the "0" that
// holder's release sends: the server did not confirm that second
// subscription.
func TestTryLockSubscribeUnansweredChannels(t *testing.T) {
	t.Parallel()
	t.Run("FairMutexRedissonQueue", func(t *testing.T) {
		t.Parallel()
		p := newProxied(t)
		l := mustFair(t, p.c, "subscribe-unanswered", WithRedissonFairQueue(0))
		warm(t, l)
		direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
		holder := mustFair(t, direct, "subscribe-unanswered", WithRedissonFairQueue(0))
		hctx, err := holder.Lock(testCtx(t, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = holder.Unlock(hctx) }()
		subscribeUnanswered(t, p, "SUBSCRIBE", func(d time.Duration) error {
			_, err := l.TryLock(context.Background(), d)
			return err
		})
	})
	t.Run("MutexRedissonHolder", func(t *testing.T) {
		t.Parallel()
		p := newProxied(t)
		l := mustMutex(t, p.c, "subscribe-unanswered")
		warm(t, l)
		// A Redisson holder: a version-4 UUID's field.
		if err := p.node.Do(t, "HSET", l.key, "0f0e0d0c-aaaa-4bbb-cccc-0123456789ab:1", "1").Error(); err != nil {
			t.Fatal(err)
		}
		if err := p.node.Do(t, "PEXPIRE", l.key, "60000").Error(); err != nil {
			t.Fatal(err)
		}
		subscribeUnanswered(t, p, l.channel, func(d time.Duration) error {
			_, err := l.TryLock(context.Background(), d)
			return err
		})
	})
}

// A semaphore's, permit semaphore's and latch's wait whose SUBSCRIBE the
// server did not answer until the wait ended says so as a lock's does.
func TestAcquireSubscribeUnanswered(t *testing.T) {
	t.Parallel()
	waits := []struct {
		what string
		// wait sets up a wait that runs out (no permit free, the count
		// above zero) and returns it.
		wait func(ctx context.Context, t *testing.T, c *Client) func(time.Duration) error
	}{
		{"Semaphore", func(ctx context.Context, t *testing.T, c *Client) func(time.Duration) error {
			sem := mustSem(t, c, "subscribe-unanswered")
			if _, err := sem.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := sem.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			return func(d time.Duration) error { return sem.TryAcquire(context.Background(), 1, d) }
		}},
		{"PermitSemaphore", func(ctx context.Context, t *testing.T, c *Client) func(time.Duration) error {
			ps := mustPermits(t, c, "subscribe-unanswered")
			if _, err := ps.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := ps.Acquire(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			return func(d time.Duration) error {
				_, err := ps.TryAcquire(context.Background(), time.Minute, d)
				return err
			}
		}},
		{"CountDownLatch", func(ctx context.Context, t *testing.T, c *Client) func(time.Duration) error {
			l := mustLatch(t, c, "subscribe-unanswered")
			if _, err := l.TrySetCount(ctx, 1); err != nil {
				t.Fatal(err)
			}
			return func(d time.Duration) error {
				ok, err := l.AwaitTimeout(context.Background(), d)
				switch {
				case ok:
					return errors.New("the latch opened")
				case err == nil:
					// False with no error: the count stayed above zero, as
					// the server answered (contention, for the checks).
					return &NotAcquiredError{Name: l.name, msg: "AwaitTimeout: false, no error"}
				}
				return err
			}
		}},
	}
	for _, w := range waits {
		t.Run(w.what, func(t *testing.T) {
			t.Parallel()
			p := newProxied(t)
			subscribeUnanswered(t, p, "SUBSCRIBE", w.wait(testCtx(t, 10*time.Second), t, p.c))
		})
	}
}

// A MultiLock whose member's wait ran out with its SUBSCRIBE unanswered
// says so as that member does.
func TestMultiLockSubscribeUnanswered(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	a, b := mustMutex(t, p.c, "ml-subscribe-a"), mustMutex(t, p.c, "ml-subscribe-b")
	warm(t, a)
	warm(t, b)
	ml := mustMulti(t, []Locker{a, b})
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	holder := mustMutex(t, direct, "ml-subscribe-b")
	hctx, err := holder.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	subscribeUnanswered(t, p, "SUBSCRIBE", func(d time.Duration) error {
		_, err := ml.TryLock(context.Background(), d)
		return err
	})
}

// subscribeUnanswered runs call, a wait of 1 s that runs out, with the
// first request carrying hold (its subscription) held back until it ends,
// and checks that it ran out unanswered; then, with the server answering,
// that waits of 300 ms end contended.
func subscribeUnanswered(t *testing.T, p proxied, hold string, call func(time.Duration) error) {
	t.Helper()
	p.px.HoldOn(hold)
	defer p.px.Thaw()
	err := call(time.Second)
	held := p.px.HeldOn()
	p.px.Thaw()
	if !held {
		t.Fatalf("the wait did not subscribe (%v)", err)
	}
	var na *NotAcquiredError
	if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("wait whose subscription the server did not answer: %v (%#v), want a NotAcquiredError with Unanswered", err, na)
	}
	// A wait's last call is cut off 100 ms past its end, which a loaded
	// machine may miss even with the server answering: one of three waits
	// must report contention, and none anything but one of the two.
	for range 3 {
		err := call(300 * time.Millisecond)
		na = nil
		if !errors.As(err, &na) {
			t.Errorf("wait with the server answering: %v, want a NotAcquiredError", err)
			return
		}
		if !na.Unanswered {
			return
		}
	}
	t.Errorf("wait with the server answering: Unanswered three times, want contention")
}

// unansweredErr reports whether err is a NotAcquiredError with Unanswered.
func unansweredErr(err error) bool {
	var na *NotAcquiredError
	return errors.As(err, &na) && na.Unanswered
}

// A wait that ran out with its subscription unconfirmed still tells the
// holder's remaining lease its last attempt saw, as a wait whose last
// attempt went unanswered tells the one seen before.
func TestTryLockSubscribeUnansweredRemaining(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	l := mustMutex(t, p.c, "subscribe-unanswered-remaining")
	warm(t, l)
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	holder := mustMutex(t, direct, "subscribe-unanswered-remaining")
	hctx, err := holder.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	p.px.HoldOn("SUBSCRIBE")
	defer p.px.Thaw()
	_, err = l.TryLock(context.Background(), 300*time.Millisecond)
	if !p.px.HeldOn() {
		t.Fatalf("the wait did not subscribe (%v)", err)
	}
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered || na.Remaining <= 0 {
		t.Fatalf("TryLock: %v (%#v), want a NotAcquiredError with Unanswered and the holder's remaining lease", err, na)
	}
}

// ownDone is a caller's context of its own type, with a Done channel of
// its own: a context derived from it and never cancelled keeps a goroutine
// watching it until it ends.
type ownDone struct {
	context.Context
	done chan struct{}
}

func (c ownDone) Done() <-chan struct{} { return c.done }

func (c ownDone) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// A wait that subscribes leaves nothing derived from the caller's context
// behind once it returned: a long-lived context (a server's) is not made to
// carry one more child, or goroutine, per wait.
func TestWaitJoinLeavesNoContext(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	l := mustMutex(t, c, "join-context")
	holder := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "join-context")
	hctx, err := holder.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	ctx := ownDone{context.Background(), make(chan struct{})}
	defer close(ctx.done)
	watching := func() int {
		buf := make([]byte, 1<<22)
		return strings.Count(string(buf[:runtime.Stack(buf, true)]), "context.(*cancelCtx).propagateCancel")
	}
	before := watching()
	for range 3 {
		if _, err := l.TryLock(ctx, 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("TryLock: %v, want ErrNotAcquired", err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := watching(); n > before {
		t.Fatalf("%d goroutines watch the caller's context after the waits returned, %d before", n, before)
	}
}
