package idempotency

import (
	"context"
	"testing"
	"time"
)

// TestClaimRenewalRetriedSoon: a renewal that fails (here it times out
// while the network to Redis is frozen) is tried again soon, not a whole
// renewal period later, while the claim still lives in Redis. With a claim
// TTL of 3 s the period is 1 s and so is the renewal's timeout: the renewal
// sent at 1 s failed at 2 s, the next was due at 3 s, past the loss deadline
// (2.9 s), so a running request lost its claim, and had its context ended,
// though the network was back at 2.1 s and the claim lived until 3 s.
func TestClaimRenewalRetriedSoon(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	s, _, px := claimStore(t, 3*time.Second)
	start := time.Now()
	c := reserve(t, s, "blip")
	ctx, done := c.Context(context.Background())
	defer done()
	time.Sleep(500*time.Millisecond - time.Since(start))
	px.Freeze() // the renewal due at 1 s hangs until its timeout, at 2 s
	t.Cleanup(px.Thaw)
	time.Sleep(2100*time.Millisecond - time.Since(start))
	px.Thaw()
	time.Sleep(3500*time.Millisecond - time.Since(start))
	if ctx.Err() != nil || c.Lost() {
		t.Fatalf("claim lost %s after a 1.6 s network freeze that ended before its expiry: %v",
			time.Since(start).Round(time.Millisecond), context.Cause(ctx))
	}
}
