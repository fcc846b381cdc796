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
