package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter whose leave from the queue meets a broken connection tries
// again, as a Mutex waiter leaving its waiter set does, also on a rueidis
// client that retries nothing: an entry left behind would hold up every
// waiter behind it until it expired (the waiter timeout, or in Redisson's
// protocol until its score passes, up to threadWaitTime times its place).
func TestFairLeaveRetriesBrokenConnection(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Native", "Redisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			prefix := sharedPrefix(t)
			// rueidis retries nothing for this client (its cancel scripts are
			// retryable otherwise): the leave's own retries are all there is.
			rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true, DisableRetry: true, PipelineMultiplex: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(rc.Close)
			c := newTestClient(t, rc, prefix)
			other := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 20*time.Second)
			var opts []LockOption
			if kind == "Redisson" {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			holder, f := mustFair(t, other, "leave", opts...), mustFair(t, c, "leave", opts...)
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Unlock(hctx)
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := f.Lock(wctx)
				done <- err
			}()
			waitQueueLen(t, node, holder, 1)
			px.Freeze() // the leave's call is written and held back, then its connection breaks
			cancel()
			if err := <-done; err == nil {
				t.Fatal("Lock succeeded behind a held lock")
			}
			time.Sleep(100 * time.Millisecond)
			px.DropAll()
			px.Thaw()
			if !eventually(2*time.Second, func() bool { return queueLen(t, node, holder) == 0 }) {
				t.Fatalf("queue length %d two seconds after the waiter left: its entry was left behind", queueLen(t, node, holder))
			}
		})
	}
}

// An attempt to queue whose reply was lost can reach the server after the
// waiter left the queue (the leave and the undo go out on a new connection
// while the attempt is still on its way, here held in a proxy) and put the
// waiter back in line. The undo's looks again take such a late entry out:
// in Redisson's protocol it would hold every later waiter up until its score
// passed (threadWaitTime, 5 minutes by default, times its place).
func TestFairUndoCatchesLateQueueEntry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, px.Client(t), prefix)
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	q := WithRedissonFairQueue(0)
	holder, f := mustFair(t, other, "late-queue", q), mustFair(t, c, "late-queue", q)
	lctx, err := f.Lock(ctx) // connection open, scripts loaded
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	px.HoldOpen()
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = f.Lock(tctx)
	cancel()
	if err == nil {
		t.Fatal("Lock through a held connection succeeded")
	}
	time.Sleep(500 * time.Millisecond) // the leave and the undo have run, on a new connection
	t.Logf("queue before the late attempt: %d", queueLen(t, node, holder))
	px.Thaw() // the attempt reaches the server now
	start := time.Now()
	if !eventually(3*time.Second, func() bool { return queueLen(t, node, holder) == 0 }) {
		t.Fatalf("queue length %d %v after the late attempt reached the server: the waiter that left is queued again", queueLen(t, node, holder), time.Since(start).Round(time.Millisecond))
	}
	t.Logf("queue empty %v after the late attempt was let through", time.Since(start).Round(time.Millisecond))
}
