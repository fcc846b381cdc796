package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// Every key the store writes has an expiry, whatever becomes of the
// request: completed, released, released before its Reserve arrived,
// abandoned by a process that stops without Close, refused over the scope's
// budget.
func TestNoKeyLeftWithoutExpiry(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, node, _ := newStore(t, idempotency.WithClaimTTL(500*time.Millisecond), idempotency.WithTTL(time.Second), idempotency.WithMaxBytesPerScope(4096))
	ctx := context.Background()
	reserve := func(key, fp string) idempotency.Reservation {
		t.Helper()
		r, err := s.Reserve(ctx, "acct", key, fp)
		if err != nil {
			t.Fatalf("Reserve %s: %v", key, err)
		}
		return r
	}
	if ok, err := reserve("done", "fp").Claim.Complete(ctx, []byte("resp")); !ok || err != nil {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	if err := reserve("released", "fp").Claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_ = reserve("abandoned", "fp") // its process stops: never completed
	for i := range 8 {
		// Over the budget: refused claims, then expired records pruned.
		r := reserve("big"+string(rune('a'+i)), "fp")
		if r.Claim != nil {
			_, _ = r.Claim.Complete(ctx, make([]byte, 1500))
		}
	}
	time.Sleep(1200 * time.Millisecond) // the records of the first ones expire
	if ok, err := reserve("after", "fp").Claim.Complete(ctx, []byte("r")); !ok || err != nil {
		t.Fatalf("Complete after expiry = %v, %v", ok, err)
	}
	s.Close()
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		pttl, err := node.Do(t, "PTTL", k).AsInt64()
		if testing.Verbose() {
			t.Logf("%s PTTL %d", k, pttl)
		}
		if err != nil || pttl == -1 {
			t.Errorf("key %s has no expiry (PTTL %d, %v)", k, pttl, err)
		}
	}
}
