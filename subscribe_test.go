package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestJoinSubscriptionEndedByServer: a waiter's subscription that the server
// confirmed and then ended (a Cluster sends SUNSUBSCRIBE when the channel's
// slot moves) before the joining goroutine looked at it is a dead
// subscription, which the wait makes again: Lock must not fail with "client
// closed" on an open Client. Which of the two the joining goroutine sees
// first is Go's random choice, so the slot moves several times.
func TestJoinSubscriptionEndedByServer(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := redistest.Prefix(t)
	opts := []Option{WithKeyPrefix(prefix), WithWaiterTimeout(30 * time.Second)}
	h := newTestClient(t, cl.Client(t), opts...)
	w := newTestClient(t, cl.Client(t), opts...)
	if !w.sharded() {
		t.Fatal("the Client does not use sharded pub/sub on a Cluster")
	}
	ctx := testCtx(t, 60*time.Second)
	moved := make(chan struct{}, 1)
	w.subs.testHookJoin = func(channel string, ready, done <-chan struct{}) {
		if !strings.Contains(channel, prefix) {
			return
		}
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
			t.Error("the subscription was not confirmed")
			return
		}
		select {
		case moved <- struct{}{}: // once per Lock
		default:
			return
		}
		mig := cl.StartMigration(t, channel)
		mig.Finish(t)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("moving the slot did not end the subscription")
		}
	}
	t.Cleanup(func() { w.subs.testHookJoin = nil })
	for i := range 12 {
		// A lock of its own per round: a new wake channel, not the last
		// round's lingering subscription.
		name := "moved:" + strconv.Itoa(i)
		holder, waiter := mustMutex(t, h, name), mustMutex(t, w, name)
		held, err := holder.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-moved:
		default:
		}
		got := within(t, 20*time.Second, "the waiter's Lock", func() error {
			l, err := waiter.Lock(ctx)
			if err != nil {
				return err
			}
			return waiter.Unlock(l)
		})
		waitFor(t, 10*time.Second, "the slot moved under the waiter", func() bool { return len(moved) == 1 })
		if err := holder.Unlock(held); err != nil {
			t.Fatalf("round %d: Unlock: %v", i, err)
		}
		got()
	}
}

// TestCloseWaitsForUnsubscribe: Close waits for every goroutine the
// subscriptions start, the unsubscribe of a waiter leaving as Close begins
// included (its count must not come after Close's wait began with nothing
// left to wait for).
func TestCloseWaitsForUnsubscribe(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c, err := New(node.Client(t), WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	l := mustLatch(t, c, "leaving")
	if _, err := l.TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	var closedFirst bool
	c.subs.testHookUnsubscribe = func(channel string) {
		if channel != l.channel {
			return
		}
		go func() {
			c.Close()
			close(closed)
		}()
		select {
		case <-closed:
			closedFirst = true
		case <-time.After(time.Second):
		}
	}
	t.Cleanup(func() { c.subs.testHookUnsubscribe = nil })
	ctx, cancel := context.WithCancel(context.Background())
	awaited := make(chan error, 1)
	go func() { awaited <- l.Await(ctx) }()
	waitFor(t, 5*time.Second, "the waiter subscribed", func() bool { return subscribers(t, node, false, l.channel) == 1 })
	cancel()
	if err := <-awaited; !errors.Is(err, context.Canceled) {
		t.Fatalf("Await: %v, want context.Canceled", err)
	}
	<-closed
	if closedFirst {
		t.Fatal("Close returned before the unsubscribe of the waiter that left was counted")
	}
}

// errorReplies is INFO stats' total_error_replies, asked through rc.
func errorReplies(t testing.TB, rc rueidis.Client) int64 {
	t.Helper()
	return infoStat(t, rc, "total_error_replies")
}

// infoStat is the integer field name of INFO stats, asked through rc.
func infoStat(t testing.TB, rc rueidis.Client, name string) int64 {
	t.Helper()
	info, err := rc.Do(context.Background(), rc.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO stats has no %s", name)
	return 0
}

// TestForcedShardedSubscribeRefused: a Client forced onto sharded pub/sub
// (WithShardedPubSub(true)) on a server that refuses SSUBSCRIBE cannot wait
// for a message: a wait fails at once with the server's refusal rather than
// subscribe again until its context ends.
func TestForcedShardedSubscribeRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--rename-command", "SSUBSCRIBE", ""))
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithShardedPubSub(true), WithFailoverGuard(false, 0))
	ctx := testCtx(t, 10*time.Second)
	holder, waiter := mustMutex(t, c, "refused"), mustMutex(t, c, "refused")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A client of its own: a new connection's handshake adds refusals
	// (rueidis's CLIENT SETINFO, which Redis 7.0 does not know).
	probe := node.Client(t)
	before := errorReplies(t, probe)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = waiter.Lock(wctx)
	took := time.Since(start)
	refusals := errorReplies(t, probe) - before
	var re *rueidis.RedisError
	if !errors.As(err, &re) || !isUnknownCommand(re) {
		t.Fatalf("Lock after %s and %d refusals: %v, want the server's refusal of SSUBSCRIBE", took, refusals, err)
	}
	if refusals > 5 || took > time.Second {
		t.Fatalf("Lock failed after %s and %d refusals: it subscribed again", took, refusals)
	}
	if err := holder.Unlock(held); err != nil {
		t.Fatal(err)
	}
}

// TestShardedPublishRefusedOutsideReleases: on a Cluster without sharded
// pub/sub whose Client could not ask (COMMAND refused), the calls besides
// releases whose scripts publish fail at the SPUBLISH after writes that a
// repeat finds done (expired permits reclaimed, dead queue heads evicted).
// Each switches the Client to PUBLISH and is made again, as a release is.
func TestShardedPublishRefusedOutsideReleases(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-command").Error(); err != nil {
			t.Fatal(err)
		}
	}
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	fresh := func(t *testing.T) *Client {
		c := newTestClient(t, cl.Client(t), prefix)
		if !c.sharded() {
			t.Fatal("the Client does not publish sharded")
		}
		return c
	}
	// expired leaves a permit of name whose lease has ended.
	expired := func(t *testing.T, name string) (id string) {
		s := mustPermits(t, newTestClient(t, cl.Client(t), prefix), name)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		id, err := s.TryAcquire(ctx, time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		return id
	}
	t.Run("PermitAcquire", func(t *testing.T) {
		expired(t, "permits:acquire")
		s := mustPermits(t, fresh(t), "permits:acquire")
		if _, err := s.TryAcquire(ctx, time.Minute, 0); err != nil {
			t.Fatalf("TryAcquire reclaiming an expired permit: %v", err)
		}
	})
	t.Run("PermitAvailable", func(t *testing.T) {
		expired(t, "permits:available")
		s := mustPermits(t, fresh(t), "permits:available")
		if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("AvailablePermits reclaiming an expired permit: %d, %v", n, err)
		}
	})
	t.Run("PermitExtend", func(t *testing.T) {
		id := expired(t, "permits:extend")
		s := mustPermits(t, fresh(t), "permits:extend")
		if err := s.Extend(ctx, id, time.Minute); !errors.Is(err, ErrUnknownPermit) {
			t.Fatalf("Extend of an expired permit: %v, want ErrUnknownPermit", err)
		}
	})
	t.Run("FairAcquire", func(t *testing.T) {
		f := mustFair(t, fresh(t), "fair")
		node := cl.NodeFor(t, f.queue)
		// A dead head (its deadline long past) before a live waiter: the
		// attempt evicts it and tells the live one, now first, by name.
		dead, live := "00000000-0000-8000-8000-000000000000:dead", "00000000-0000-8000-8000-000000000001:live"
		for _, args := range [][]string{
			{"RPUSH", f.queue, dead, live},
			{"ZADD", f.timeouts, "1", dead, strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10), live},
		} {
			if err := node.Do(t, args...).Error(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("TryLock behind a live waiter: %v, want ErrNotAcquired", err)
		}
		if head, _ := node.Do(t, "LINDEX", f.queue, "0").ToString(); head != live {
			t.Fatalf("queue head %q, want the live waiter", head)
		}
	})
}
