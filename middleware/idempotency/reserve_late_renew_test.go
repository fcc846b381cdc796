package idempotency

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClaimRenewedAfterSlowReserve: a reservation whose reply was lost with
// its connection is made again (the claim was already made, by the first
// call, and its TTL runs from then). The first renewal is due a third of the
// claim TTL after that first call was sent, not after Reserve returned: with
// a claim TTL of 3 s and the reply lost for 2.2 s it came at 3.2 s, past the
// loss deadline (2.9 s), and the running request lost its claim though Redis
// answered all along.
func TestClaimRenewedAfterSlowReserve(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	s, err := NewStore(px.Client(t), WithPrefix(redistest.Prefix(t)), WithClaimTTL(3*time.Second), WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Reserve(context.Background(), "acct", "warm", "fp"); err != nil { // connected
		t.Fatal(err)
	}
	start := time.Now()
	px.FreezeReplies()
	t.Cleanup(px.Thaw)
	time.AfterFunc(2200*time.Millisecond, func() { px.DropAll(); px.Thaw() })
	r, err := s.Reserve(context.Background(), "acct", "slow", "fp")
	if err != nil || r.State != Claimed {
		t.Fatalf("Reserve = %+v, %v after %s; want Claimed", r, err, time.Since(start))
	}
	ctx, done := r.Claim.Context(context.Background())
	defer done()
	time.Sleep(3500*time.Millisecond - time.Since(start))
	if ctx.Err() != nil || r.Claim.Lost() {
		t.Fatalf("claim lost %s after a reservation that returned after 2.2 s: %v",
			time.Since(start).Round(time.Millisecond), context.Cause(ctx))
	}
	pttl, err := node.Do(t, "PTTL", s.keys("acct", "slow").record).AsInt64()
	if err != nil || pttl <= 0 {
		t.Fatalf("PTTL of the running claim: %d, %v; want it renewed", pttl, err)
	}
}
