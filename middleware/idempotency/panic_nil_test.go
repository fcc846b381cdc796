package idempotency

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// nilPanickyClient is a rueidis client whose next n calls panic with nil,
// before anything is sent.
type nilPanickyClient struct {
	rueidis.Client
	n atomic.Int64
}

func (p *nilPanickyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if p.n.Add(-1) >= 0 {
		panic(nil)
	}
	return p.Client.Do(ctx, cmd)
}

// TestClaimRenewalPanicNil: under GODEBUG=panicnil=1, where recover
// returns nil for panic(nil), a claim's renewal meeting a client wrapper
// that panics with nil is taken as a renewal that failed and made again, as
// any other panic is: the claim lives on. It was taken for a renewal that
// went through and found the claim gone, and the claim's context ended with
// ErrClaimLost (so was a background retry's taken for one that went
// through, and a response left unstored).
func TestClaimRenewalPanicNil(t *testing.T) {
	// Not parallel: GODEBUG is the process's.
	t.Setenv("GODEBUG", "panicnil=1")
	node := redistest.Server(t)
	rc := &nilPanickyClient{Client: node.Client(t)}
	// The first renewal is due at 1 s, its retry 250 ms later; the claim
	// could expire at 3 s.
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(3*time.Second), WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := reserve(t, s, "renew-panic-nil")
	ctx, cancel := c.Context(context.Background())
	defer cancel()
	rc.n.Store(1)
	select {
	case <-ctx.Done():
		t.Fatalf("claim whose renewal panicked with nil once ended with %v; want it renewed on", context.Cause(ctx))
	case <-time.After(4 * time.Second):
	}
	if ok, err := c.Complete(context.Background(), []byte("response")); !ok || err != nil {
		t.Fatalf("Complete after the claim TTL = %v, %v; want the claim still held", ok, err)
	}
}
