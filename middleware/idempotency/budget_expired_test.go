package idempotency_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestBudgetAfterRecordsExpired: once a scope's records have expired, a new
// key is claimed, also when the scope had gone over its budget with the
// responses of requests that were running (more expired records than one
// reservation prunes at a time) while a longer-lived record keeps its
// accounting: the expired records' bytes no longer count. The first new
// key was refused OverBudget, and so was each after it until enough refused
// reservations had pruned the expired records sixteen at a time.
func TestBudgetAfterRecordsExpired(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := redistest.Prefix(t)
	rc := node.Client(t)
	store := func(ttl time.Duration) *idempotency.Store {
		s, err := idempotency.NewStore(rc, idempotency.WithPrefix(prefix), idempotency.WithTTL(ttl),
			idempotency.WithMaxBytesPerScope(50_000))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	// The short TTL outlasts reserving and completing 40 requests one after
	// another on a loaded machine (500 ms did not: records expired before
	// the scope was found over its budget).
	const ttl = 3 * time.Second
	long, short := store(time.Hour), store(ttl)
	ctx := context.Background()
	complete := func(s *idempotency.Store, claims []*idempotency.Claim, n int) {
		t.Helper()
		for _, c := range claims {
			if ok, err := c.Complete(ctx, bytes.Repeat([]byte("x"), n)); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
	}
	reserve := func(s *idempotency.Store, key string) *idempotency.Claim {
		t.Helper()
		r, err := s.Reserve(ctx, "acct", key, "fp")
		if err != nil || r.State != idempotency.Claimed {
			t.Fatalf("Reserve(%s): %v %v, want Claimed", key, r.State, err)
		}
		return r.Claim
	}
	// A record kept for an hour, which keeps the scope's accounting.
	complete(long, []*idempotency.Claim{reserve(long, "kept")}, 10)
	// 40 requests running at once, within the budget; their 2 KB responses
	// take the scope past it, as running requests may.
	var running []*idempotency.Claim
	for i := range 40 {
		running = append(running, reserve(short, fmt.Sprint("k", i)))
	}
	complete(short, running, 2000)
	completed := time.Now() // each record's TTL began by now
	if r, err := short.Reserve(ctx, "acct", "over", "fp"); err != nil || r.State != idempotency.OverBudget {
		t.Fatalf("over the budget: %v %v, want OverBudget", r.State, err)
	}
	time.Sleep(time.Until(completed.Add(ttl + 300*time.Millisecond))) // the 40 records expire
	reserve(short, "after")
}
