package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// attemptCounter records the attempts of the last acquisition.
type attemptCounter struct {
	NopObserver
	attempts atomic.Int64
}

func (o *attemptCounter) AcquireEnd(_ context.Context, _ Op, e AcquireEvent) {
	o.attempts.Store(int64(e.Attempts))
}

// A Redisson client given a lease near Long.MAX_VALUE ms writes its permit's
// lease end past the long's range, which wraps to a negative score
// (calcTimeout: now + lease). No client ever reclaims such a permit (both
// reclaim scores 0 to now), so it is held for good: a waiter must not read
// it as a lease already over and call again every millisecond for its
// whole wait.
func TestPermitWaiterBesideNegativeLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &attemptCounter{}
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithObserver(obs))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "wrapped")
	if ok, err := p.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	// Java's acquisition of the only permit, its lease end wrapped.
	raw, _ := permitWire(randomID())
	node.Do(t, "DECR", p.Key())
	node.Do(t, "ZADD", redissonSuffix(p.Key(), "timeout"), "-9223372036854", string(raw))

	_, err := p.TryAcquire(ctx, time.Minute, time.Second)
	if err == nil {
		t.Fatal("TryAcquire took a permit held for good")
	}
	if n := obs.attempts.Load(); n > 10 {
		t.Fatalf("a one-second wait beside a permit that never ends made %d attempts: it called again every millisecond", n)
	}
	if st, err := p.State(ctx); err != nil || st.Available != 0 {
		t.Fatalf("State = %+v, %v; want no permit available", st, err)
	}
}

// State counts a permit whose lease end wrapped below 0 as held: nobody
// reclaims it, so it is neither free nor gone.
func TestPermitStateCountsNegativeLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "wrapped-state")
	if ok, err := p.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	raw, _ := permitWire(randomID())
	node.Do(t, "DECR", p.Key())
	node.Do(t, "ZADD", redissonSuffix(p.Key(), "timeout"), "-9223372036854", string(raw))
	if _, err := p.AvailablePermits(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := p.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Available != 1 || st.Held != 1 {
		t.Fatalf("State = %+v; want 1 available and the permit whose lease end wrapped below 0 held", st)
	}
}

// An Extend to a lease longer than every other held permit's publishes
// nothing beside a permit whose lease end wrapped below 0: that permit's
// lease is over for nobody, and read as one that ended, unreclaimed, it made
// every Extend publish.
func TestPermitExtendBesideNegativeLeaseQuiet(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "wrapped-extend")
	if ok, err := p.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	raw, _ := permitWire(randomID())
	node.Do(t, "DECR", p.Key())
	node.Do(t, "ZADD", redissonSuffix(p.Key(), "timeout"), "-9223372036854", string(raw))
	id, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	msgs := listen(t, node, p.channel)
	for range 2 {
		if err := p.Extend(ctx, id, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	msgs.quiet(t, 300*time.Millisecond)
}
