package idempotency

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClaimTTLShorterThanMargin: a claim is presumed lost the claim TTL
// less a margin for clock drift (a fiftieth of it plus 5 ms) after its last
// confirmed call, and renewed a third of the claim TTL after it. A claim
// TTL under which that loss comes before the first renewal would end every
// handler's context with ErrClaimLost as soon as it starts (every request
// answered 503): NewStore refuses it, as it refuses other TTLs too short.
func TestClaimTTLShorterThanMargin(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, d := range []time.Duration{3 * time.Millisecond, 5 * time.Millisecond, 7 * time.Millisecond} {
		s, err := NewStore(node.Client(t), WithClaimTTL(d))
		if err == nil {
			s.Close()
			t.Errorf("NewStore accepted claim TTL %s: its claims are presumed lost %s after they are made, before their first renewal at %s",
				d, d-claimMargin(d), d/3)
		}
	}
	s, err := NewStore(node.Client(t), WithClaimTTL(10*time.Millisecond))
	if err != nil {
		t.Fatalf("claim TTL 10ms: %v", err)
	}
	s.Close()
}
