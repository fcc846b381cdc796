package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNewRefusesReplicaOnlySentinel: a rueidis Sentinel client made with
// ReplicaOnly sends every command to a replica, which refuses every write
// with READONLY. New refuses it at once with ErrInvalidArgument, where the
// Client took it and each Lock retried READONLY as a failover not yet seen,
// until its context ended.
func TestNewRefusesReplicaOnlySentinel(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t)
	rc := s.Client(t, func(o *rueidis.ClientOption) { o.ReplicaOnly = true })
	c, err := New(rc, WithKeyPrefix(redistest.Prefix(t)))
	if err == nil {
		defer c.Close()
		m := mustMutex(t, c, "m")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, lerr := m.Lock(ctx)
		t.Fatalf("New accepted a replica-only Sentinel client; Lock then returned %v", lerr)
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("New returned %v, want ErrInvalidArgument", err)
	}
	t.Log(err)
	// The same deployment's primary is taken.
	c = newTestClient(t, s.Client(t))
	if _, err := mustMutex(t, c, "m").TryLock(testCtx(t, 10*time.Second), 0); err != nil {
		t.Fatal(err)
	}
}
