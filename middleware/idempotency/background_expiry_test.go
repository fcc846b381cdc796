package idempotency

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCompleteRetryEndsWithClaim: a Complete that fails during an outage
// keeps retrying only while its claim may still live. Once the claim has
// expired no retry can store the response, so the retry gives its slot of
// WithMaxBackgroundRetries back rather than hold it a claim TTL longer.
func TestCompleteRetryEndsWithClaim(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	const claimTTL = 3 * time.Second
	node := redistest.Server(t)
	s, err := NewStore(node.Client(t), WithPrefix(redistest.Prefix(t)), WithClaimTTL(claimTTL),
		WithTimeout(100*time.Millisecond), WithMaxBackgroundRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	warm(t, s)
	sent := time.Now() // the claim below expires at the latest claimTTL after its Reserve returns
	c := reserve(t, s, "running")
	confirmed := time.Now()
	node.Kill() // no renewal reaches Redis from now on
	time.Sleep(claimTTL/2 - time.Since(sent))
	if _, err := c.Complete(context.Background(), []byte("response")); err == nil || errors.Is(err, ErrRetryDropped) {
		t.Fatalf("Complete with the server killed: %v, want a retried error", err)
	}
	if n := s.inFlight(); n != 1 {
		t.Fatalf("%d background retries after the failed Complete, want 1", n)
	}
	// The claim is gone claimTTL after it was confirmed; a retry started
	// afresh would last until claimTTL after the Complete, half a claim TTL
	// later. Allow a loaded machine 600 ms past the expiry.
	deadline := confirmed.Add(claimTTL + 600*time.Millisecond)
	for s.inFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the Complete retry still holds its slot %s after its claim was confirmed, claim TTL %s",
				time.Since(confirmed).Round(time.Millisecond), claimTTL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A Complete whose claim has already expired starts no retry at all.
	c2 := &Claim{store: s, key: s.keys("acct", "late"), token: "t"}
	c2.start(time.Now().Add(-claimTTL - time.Second))
	if _, err := c2.Complete(context.Background(), []byte("response")); err == nil {
		t.Fatal("Complete with the server killed succeeded")
	}
	if n := s.inFlight(); n != 0 {
		t.Fatalf("%d background retries for a Complete whose claim had expired, want 0", n)
	}
}
