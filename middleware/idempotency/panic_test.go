package idempotency

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyClient is a rueidis client whose calls panic while on is set, as
// a client wrapper's may, before anything is sent.
type panickyClient struct {
	rueidis.Client
	on atomic.Bool
}

func (p *panickyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if p.on.Load() {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

func (p *panickyClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if p.on.Load() {
		panic("client wrapper panicked")
	}
	return p.Client.DoMulti(ctx, multi...)
}

// A claim's renewal, made on a timer's goroutine, meets a client wrapper
// that panics: the panic is taken as a renewal that failed (made again soon,
// the claim lost at its loss deadline should none get through), instead of
// crashing the process.
func TestClaimRenewalPanic(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	node := redistest.Server(t)
	rc := &panickyClient{Client: node.Client(t)}
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(600*time.Millisecond), WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := reserve(t, s, "renew-panic")
	ctx, cancel := c.Context(context.Background())
	defer cancel()
	rc.on.Store(true)
	ended(t, ctx, 5*time.Second)
	rc.on.Store(false)
	if err := context.Cause(ctx); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("the claim's context ended with %v, want ErrClaimLost", err)
	}
}

// A background undo (here of a reservation whose reply did not come) meets
// a client wrapper that panics: the panic is taken as an attempt that
// failed, made again until the claim's deadline, instead of crashing the
// process. Once the wrapper calls through, the undo frees the key.
func TestBackgroundUndoPanic(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &panickyClient{Client: node.Client(t)}
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(time.Minute), WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	warm(t, s) // connected, the scripts loaded
	node.Pause()
	if _, err := s.Reserve(context.Background(), "acct", "undo-panic", "fp"); err == nil {
		t.Fatal("Reserve with the server frozen succeeded")
	}
	rc.on.Store(true)
	node.Resume()
	time.Sleep(time.Second) // undo attempts, all panicking
	rc.on.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := s.Reserve(context.Background(), "acct", "undo-panic", "fp")
		if err == nil && r.State == Claimed {
			_ = r.Claim.Release(context.Background())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key was not freed by the undo: %+v, %v", r, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
