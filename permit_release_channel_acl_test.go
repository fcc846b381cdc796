package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestPermitReleaseChannelRefused: a PermitSemaphore.Release by an ACL user
// without the semaphore's channel (Redis 7 gives a new user none) gave the
// permit back, then failed at its publish: the caller got an error with the
// permit gone from the set and counted free, and nobody waiting was told. It
// is refused before it writes (NO_PUBLISH): every key keeps its value and
// life, and the permit is still held.
func TestPermitReleaseChannelRefused(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	aps := mustPermits(t, admin, "ps")
	if ok, err := aps.TrySetPermits(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	ps := mustPermits(t, app, "ps")
	id, err := ps.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	before := keysState(t, n)
	err = ps.Release(ctx, id)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Release by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("Release refused (%v), yet it wrote: %v", err, diff)
	}
	if got, _ := n.Do(t, "ZCARD", ps.timeouts).AsInt64(); got != 1 {
		t.Errorf("after the refused Release, %d permits held, want 1", got)
	}
	// The admin, allowed the channel, gives it back.
	if err := aps.Release(ctx, id); err != nil {
		t.Errorf("Release by the admin: %v", err)
	}
}

// TestPermitExtendChannelRefused: an Extend of a permit whose lease has
// ended returns it to the pool and publishes the count; by an ACL user
// without the semaphore's channel it reclaimed the permit, then failed at
// its publish: the permit was counted free and nobody waiting was told. It
// is refused before it writes (NO_PUBLISH), as is an Extend to a lease
// ending before every other, which publishes too.
func TestPermitExtendChannelRefused(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	aps := mustPermits(t, admin, "ps")
	if ok, err := aps.TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	ps := mustPermits(t, app, "ps")
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	short, err := ps.Acquire(ctx, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // its lease ends
	before := keysState(t, n)
	err = ps.Extend(ctx, short, time.Minute)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Extend of an ended permit by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("Extend of an ended permit refused (%v), yet it wrote: %v", err, diff)
	}
	// A live permit's lease made the soonest to end (the ended one taken
	// out first: an acquisition would reclaim it, and publish).
	if err := n.Do(t, "ZREM", ps.timeouts, mustWire(t, short)).Error(); err != nil {
		t.Fatal(err)
	}
	live, err := ps.Acquire(ctx, 2*time.Minute)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	before = keysState(t, n)
	err = ps.Extend(ctx, live, time.Second)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Extend to the soonest lease by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("Extend to the soonest lease refused (%v), yet it wrote: %v", err, diff)
	}
}

func mustWire(t *testing.T, id string) string {
	t.Helper()
	w, err := permitWire(id)
	if err != nil {
		t.Fatal(err)
	}
	return string(w)
}
