package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestPermitReclaimChannelRefused: an Acquire or AvailablePermits that finds
// permits whose lease ended returns them to the pool and publishes the
// count; by an ACL user without the semaphore's channel it reclaimed them,
// then failed at its publish: the permits were counted free and nobody
// waiting was told. It is refused before it writes (NO_PUBLISH): every key
// keeps its value and life.
func TestPermitReclaimChannelRefused(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	aps := mustPermits(t, admin, "ps")
	if ok, err := aps.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	ps := mustPermits(t, app, "ps")
	if _, err := ps.Acquire(ctx, 100*time.Millisecond); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // its lease ends
	before := keysState(t, n)
	_, err := ps.AvailablePermits(ctx)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("AvailablePermits reclaiming by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("AvailablePermits reclaiming refused (%v), yet it wrote: %v", err, diff)
	}
	before = keysState(t, n)
	_, err = ps.TryAcquire(ctx, time.Minute, 0)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("TryAcquire reclaiming by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("TryAcquire reclaiming refused (%v), yet it wrote: %v", err, diff)
	}
	// The admin, allowed the channel, reclaims and takes it.
	if _, err := aps.TryAcquire(ctx, time.Minute, 0); err != nil {
		t.Errorf("TryAcquire by the admin: %v", err)
	}
}
