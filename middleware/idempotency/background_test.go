package idempotency

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// inFlight is how many background retries the store runs.
func (s *Store) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retries
}

// During an outage every failed call would start a retry that lives up to the
// claim TTL, so retries would grow with request rate × claim TTL. They are
// capped: a Reserve beyond half the cap leaves its possible claim to the
// claim TTL, and a Complete beyond the whole cap its claim, both reported with
// ErrRetryDropped. Half the cap is kept for Complete, whose retry is what
// keeps a request that ran from running again.
func TestBackgroundRetriesBounded(t *testing.T) {
	const limit = 8
	node := redistest.Server(t)
	s, err := NewStore(node.Client(t), WithPrefix(redistest.Prefix(t)), WithClaimTTL(time.Minute),
		WithTimeout(100*time.Millisecond), WithMaxBackgroundRetries(limit))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	// The 100 ms timeout is for the frozen server below; before the freeze a
	// round trip on a loaded machine may outlast it. Such a reservation is
	// tried again once its undo has run, so the cap is empty at the freeze.
	claimed := func(key string) *Claim {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			r, err := s.Reserve(context.Background(), "acct", key, "fp")
			if err == nil && r.State == Claimed {
				return r.Claim
			}
			if time.Now().After(deadline) {
				t.Fatalf("Reserve(%q) = %+v, %v; want Claimed", key, r, err)
			}
			for s.inFlight() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	// Connected, with the scripts loaded: the claims below take one round trip.
	claimed("warm")
	var claims []*Claim
	for i := range limit {
		claims = append(claims, claimed(fmt.Sprint("running", i)))
	}
	if n := s.inFlight(); n != 0 {
		t.Fatalf("%d background retries before the freeze, want 0", n)
	}
	// Frozen, not killed: the calls are sent and never answered, so each
	// reservation's outcome is unknown and must be undone. (A killed server
	// refuses connections: a call that could not be sent claims nothing.)
	node.Pause()
	before := runtime.NumGoroutine()
	dropped := 0
	for i := range 60 {
		_, err := s.Reserve(context.Background(), "acct", fmt.Sprint("new", i), "fp")
		if err == nil {
			t.Fatalf("Reserve with the server frozen succeeded")
		}
		if errors.Is(err, ErrRetryDropped) {
			dropped++
		}
	}
	// The goroutines are the retries, a few of the client's aside.
	if grown := runtime.NumGoroutine() - before; grown > limit/2+10 {
		t.Fatalf("%d more goroutines after 60 failed reservations, cap %d (undos %d)", grown, limit, limit/2)
	}
	if n := s.inFlight(); n > limit/2 {
		t.Fatalf("%d background retries after 60 failed reservations, cap %d (undos %d)", n, limit, limit/2)
	}
	if dropped != 60-limit/2 {
		t.Fatalf("%d reservations reported ErrRetryDropped, want %d", dropped, 60-limit/2)
	}
	// Complete keeps its share of the cap however many undos ran first.
	for i, c := range claims {
		_, err := c.Complete(context.Background(), []byte("response"))
		if err == nil {
			t.Fatalf("Complete with the server frozen succeeded")
		}
		if want := i >= limit/2; errors.Is(err, ErrRetryDropped) != want {
			t.Fatalf("Complete %d: %v; ErrRetryDropped expected: %v", i, err, want)
		}
	}
	if n := s.inFlight(); n != limit {
		t.Fatalf("%d background retries, want the cap %d", n, limit)
	}
	if grown := runtime.NumGoroutine() - before; grown > limit+10 {
		t.Fatalf("%d more goroutines after 60 failed reservations and %d failed completes, cap %d", grown, limit, limit)
	}
	s.Close()
	if n := s.inFlight(); n != 0 {
		t.Fatalf("%d background retries after Close", n)
	}
}
