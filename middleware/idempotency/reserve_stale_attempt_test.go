package idempotency_test

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// lostFirst is a rueidis.Client whose first call naming arg, while armed,
// stays on its way to Redis (a connection that broke under it as the
// client sees it, while its bytes still sit in a proxy or a socket buffer):
// the caller gets io.EOF at once, and the call reaches Redis only when
// deliver is called, after its caller's later calls on other connections.
type lostFirst struct {
	rueidis.Client
	arg string

	mu    sync.Mutex
	armed bool
	held  []string
}

func (c *lostFirst) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	c.mu.Lock()
	hold := c.armed && slices.Contains(args, c.arg)
	if hold {
		c.armed, c.held = false, slices.Clone(args)
	}
	c.mu.Unlock()
	if hold {
		return rueidis.NewErrorResult(io.EOF)
	}
	return c.Client.Do(ctx, cmd)
}

func (c *lostFirst) deliver(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	args := c.held
	c.mu.Unlock()
	cmd := c.Client.B().Arbitrary(args[0]).Args(args[1:]...).Build()
	if err := c.Client.Do(context.Background(), cmd).Error(); err != nil && !rueidis.IsRedisNil(err) {
		t.Fatalf("late call %v: %v", args[0], err)
	}
}

// TestReleaseBeforeStaleAttempt: a reservation made again after its
// connection broke under it claims the key; its request fails and releases
// it; then the first attempt, still on its way when the connection broke,
// reaches Redis. It claims nothing: the key stays free for a retry. It used
// to claim the key again for nobody (the release had found the claim and
// left no mark for the token), and every retry was answered "in flight" for
// the whole claim TTL.
func TestReleaseBeforeStaleAttempt(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := &lostFirst{Client: node.Client(t), arg: "fp"}
	s, err := idempotency.NewStore(c, idempotency.WithPrefix(redistest.Prefix(t)), idempotency.WithClaimTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()

	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()
	first, err := s.Reserve(ctx, "acct", "k", "fp")
	if err != nil || first.State != idempotency.Claimed {
		t.Fatalf("reservation made again after a broken connection: %+v, %v; want Claimed", first, err)
	}
	if err := first.Claim.Release(ctx); err != nil { // the request failed, nothing stored
		t.Fatal(err)
	}
	c.deliver(t) // the first attempt arrives

	retry, err := s.Reserve(ctx, "acct", "k", "fp")
	if err != nil || retry.State != idempotency.Claimed {
		t.Fatalf("retry after the request released the key: %+v, %v; want Claimed (no request holds the key)", retry, err)
	}
	_ = retry.Claim.Release(ctx)
}
