package idempotency_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// heldBack is a rueidis.Client that, while armed, holds back the calls
// naming a given argument: the caller gets its context's error when it gives up, and the
// call reaches Redis only when release is called, as a call stuck on a
// stalled connection (or queued behind others on one) does while calls on
// other connections pass it.
type heldBack struct {
	rueidis.Client
	arg string

	mu    sync.Mutex
	armed bool
	held  [][]string
	calls int // calls passed on
}

func (c *heldBack) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	c.mu.Lock()
	hold := c.armed && slices.Contains(args, c.arg)
	if hold {
		c.held = append(c.held, slices.Clone(args))
	}
	c.mu.Unlock()
	if hold {
		<-ctx.Done()
		return rueidis.NewErrorResult(ctx.Err())
	}
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Client.Do(ctx, cmd)
}

// release sends the held calls to Redis.
func (c *heldBack) release(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.mu.Unlock()
	for _, args := range held {
		cmd := c.Client.B().Arbitrary(args[0]).Args(args[1:]...).Build()
		if err := c.Client.Do(context.Background(), cmd).Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("held call %v: %v", args[0], err)
		}
	}
}

func (c *heldBack) arm(on bool) {
	c.mu.Lock()
	c.armed = on
	c.mu.Unlock()
}

func (c *heldBack) passed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// TestLateReservationWhileHeld: a reservation whose caller gave up is
// released in the background; when that release reaches Redis while another
// request holds the key, and the reservation itself only after that request
// has released it, the late reservation claims nothing. It used to claim the
// key for nobody: no request ran under it, and every retry was answered "in
// flight" for the whole claim TTL.
func TestLateReservationWhileHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := &heldBack{Client: node.Client(t), arg: "fp"}
	s, err := idempotency.NewStore(c, idempotency.WithPrefix(redistest.Prefix(t)), idempotency.WithClaimTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()

	first, err := s.Reserve(ctx, "acct", "k", "fp")
	if err != nil || first.State != idempotency.Claimed {
		t.Fatalf("first request: %+v, %v; want Claimed", first, err)
	}
	// A request that gives up waiting for its reservation, which stays on
	// its way to Redis: its undo reaches Redis first, while the key is held.
	before := c.passed()
	lctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	c.arm(true)
	_, err = s.Reserve(lctx, "acct", "k", "fp")
	c.arm(false)
	cancel()
	if err == nil {
		t.Fatal("reservation held back: no error")
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.passed() == before { // the undo's release
		if time.Now().After(deadline) {
			t.Fatal("no undo of the reservation given up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	// The first request ends without storing its answer; then the late
	// reservation arrives.
	if err := first.Claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c.release(t)

	retry, err := s.Reserve(ctx, "acct", "k", "fp")
	if err != nil || retry.State != idempotency.Claimed {
		t.Fatalf("retry after the late reservation: %+v, %v; want Claimed (no request holds the key)", retry, err)
	}
	retry.Claim.Release(ctx)
}
