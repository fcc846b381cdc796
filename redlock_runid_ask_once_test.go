package scriptlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// onInfoServer is a rueidis client wrapper, its nodes' too, that hands
// every INFO server to do, which may send it on to the server (next).
type onInfoServer struct {
	rueidis.Client
	do func(ctx context.Context, next func() rueidis.RedisResult) rueidis.RedisResult
}

func (c onInfoServer) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if slices.Equal(cmd.Commands(), []string{"INFO", "server"}) {
		return c.do(ctx, func() rueidis.RedisResult { return c.Client.Do(ctx, cmd) })
	}
	return c.Client.Do(ctx, cmd)
}

func (c onInfoServer) Nodes() map[string]rueidis.Client {
	out := map[string]rueidis.Client{}
	for addr, n := range c.Client.Nodes() {
		out[addr] = onInfoServer{n, c.do}
	}
	return out
}

// infoCounter counts in n the INFO server rc's nodes are sent.
func infoCounter(rc rueidis.Client, n *atomic.Int64) rueidis.Client {
	return onInfoServer{rc, func(_ context.Context, next func() rueidis.RedisResult) rueidis.RedisResult {
		n.Add(1)
		return next()
	}}
}

// TestRedLockRunIDAskedOnceAtATime: RedLocks made per request, whose first
// Lock checks that no two nodes reach one server, run together as the
// run_id a Client kept runs out. The Client asks its server INFO once for
// all of them, not once each: every one of 64 such Locks sent its own.
func TestRedLockRunIDAskedOnceAtATime(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	var infos atomic.Int64
	cs := redlockClientsThrough(t, nodes, 0, infoCounter(nodes[0].Client(t), &infos))
	const keep = 2 * time.Second
	cs[0].runKeep = keep
	ctx := testCtx(t, 30*time.Second)
	for round := range 2 {
		time.Sleep(keep + 100*time.Millisecond) // the kept run_id ran out
		infos.Store(0)
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := NewRedLock("ask-once", cs)
				if err != nil {
					t.Error(err)
					return
				}
				lctx, err := r.TryLock(ctx, 0)
				if err == nil {
					_ = r.Unlock(lctx)
				}
			}()
		}
		wg.Wait()
		if n := infos.Load(); n > 2 {
			t.Errorf("round %d: 64 first Locks sent the node %d INFO server, want one (two at most, should the kept one run out meanwhile)", round, n)
		}
	}
}
