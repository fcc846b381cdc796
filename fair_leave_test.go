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
