package scriptlock

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// infoCounter is a rueidis client wrapper that counts the INFO server its
// nodes are sent.
type infoCounter struct {
	rueidis.Client
	n *atomic.Int64
}

func (c infoCounter) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) == 2 && cs[0] == "INFO" && cs[1] == "server" {
		c.n.Add(1)
	}
	return c.Client.Do(ctx, cmd)
}

func (c infoCounter) Nodes() map[string]rueidis.Client {
	out := map[string]rueidis.Client{}
	for addr, n := range c.Client.Nodes() {
		out[addr] = infoCounter{n, c.n}
	}
	return out
}

// TestRedLockRunIDAskedOnceAtATime: RedLocks made per request, whose first
// Lock checks that no two nodes reach one server, run together as the
// run_id a Client kept runs out. The Client asks its server INFO once for
// all of them, not once each: every one of 64 such Locks sent its own.
func TestRedLockRunIDAskedOnceAtATime(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	var infos atomic.Int64
	cs := []*Client{
		newTestClient(t, infoCounter{nodes[0].Client(t), &infos}, prefix),
		newTestClient(t, nodes[1].Client(t), prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
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
