package idempotency

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReserveRedisDownFailsFast: with Redis refusing connections (down,
// restarting) a reservation fails at once, as a lock acquisition does, so the
// middleware answers 503 at once instead of holding every request for the
// whole store timeout. Nothing reached Redis, so nothing is left to undo in
// the background. Once Redis is back the key is free.
func TestReserveRedisDownFailsFast(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	s, err := NewStore(node.Client(t), WithPrefix(redistest.Prefix(t)), WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	reserve(t, s, "warm") // connected, with the script loaded
	node.Kill()
	// The first calls may have been written to the connections the kill
	// broke: their outcome is unknown, so they are undone. Once the client
	// knows them broken, calls never leave this process. rueidis spreads
	// keyed calls over its connections at random (two on 2 cores), and one
	// learns of the kill only at its next call: calls are made until 20 in
	// a row started no undo (10 calls in all left one connection unused
	// about once in a thousand runs, 2^-10, and the next calls found it).
	undos, calm := s.inFlight(), 0
	for i := 0; calm < 20; i++ {
		if i == 200 {
			t.Fatalf("reservations with Redis down went on starting undos: %d", s.inFlight())
		}
		_, _ = s.Reserve(context.Background(), "acct", "K", "fp")
		if n := s.inFlight(); n != undos {
			undos, calm = n, 0
		} else {
			calm++
		}
	}
	for i := range 3 {
		start := time.Now()
		_, err := s.Reserve(context.Background(), "acct", "K", "fp")
		if took := time.Since(start); err == nil || took > time.Second {
			t.Fatalf("Reserve %d with Redis down: %v after %s; want an error at once, not after the 3 s timeout", i, err, took.Round(time.Millisecond))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Reserve %d with Redis down: %v; want the connection error", i, err)
		}
	}
	if n := s.inFlight(); n != undos {
		t.Fatalf("%d background undos after 3 more reservations with Redis down, %d before; want no more", n, undos)
	}
	node.Restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := s.Reserve(context.Background(), "acct", "K", "fp")
		if err == nil {
			if r.State != Claimed {
				t.Fatalf("Reserve after the restart = %+v; want Claimed", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Reserve after the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
