package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestReserveEndedContext: a Reserve whose context has already ended (the
// client went away before its request got that far) answers the context's
// error and leaves nothing in Redis: no claim, no tombstone outside the
// scope's budget.
func TestReserveEndedContext(t *testing.T) {
	t.Parallel()
	s, node, prefix := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Reserve(ctx, "acct", "k1", "fp1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reserve with an ended context: %v, want context.Canceled", err)
	}
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if keys, err := node.Do(t, "KEYS", prefix+"*").AsStrSlice(); err != nil || len(keys) != 0 {
			t.Fatalf("after a Reserve that never ran: keys %q (%v), want none", keys, err)
		}
	}
	if r, err := s.Reserve(context.Background(), "acct", "k1", "fp1"); err != nil || r.Claim == nil {
		t.Fatalf("Reserve afterwards: %+v, %v; want Claimed", r, err)
	}
}
