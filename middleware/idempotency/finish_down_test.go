package idempotency

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestFinishRedisDownFailsFast: with Redis refusing connections, Complete
// and Release return at once, their calls left to the background retry, as
// the reservation does: the client's answer, already decided, is not held
// back for the whole store timeout. Once Redis is back (from its
// append-only file, the claims with it) the response is stored and the
// released key is free.
func TestFinishRedisDownFailsFast(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithAOF())
	s, err := NewStore(node.Client(t), WithPrefix(redistest.Prefix(t)), WithTimeout(3*time.Second),
		WithClaimTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	a, b := reserve(t, s, "a"), reserve(t, s, "b")
	node.Kill()
	reserveErr := func() { _, _ = s.Reserve(context.Background(), "acct", "c", "fp") }
	reserveErr() // the client notices the closed connection
	start := time.Now()
	if _, err := a.Complete(context.Background(), []byte("done")); err == nil {
		t.Fatal("Complete with Redis down succeeded")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Complete with Redis down returned after %s; want at once, not after the 3 s timeout", took.Round(time.Millisecond))
	}
	start = time.Now()
	if err := b.Release(context.Background()); err == nil {
		t.Fatal("Release with Redis down succeeded")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Release with Redis down returned after %s; want at once, not after the 3 s timeout", took.Round(time.Millisecond))
	}
	node.Restart(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ra, erra := s.Reserve(context.Background(), "acct", "a", "fp")
		rb, errb := s.Reserve(context.Background(), "acct", "b", "fp")
		if erra == nil && errb == nil && ra.State == Done && string(ra.Response) == "done" && rb.State == Claimed {
			break
		}
		if erra == nil && ra.State == Claimed {
			t.Fatal("the completed request can run again: its claim was lost")
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: a %+v, %v; b %+v, %v; want a Done with its response, b free", ra, erra, rb, errb)
		}
		if rb.Claim != nil {
			_ = rb.Claim.Release(context.Background())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
