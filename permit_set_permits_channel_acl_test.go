package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// withoutNew drops from after the keys with prefix that were not in before:
// the record a call reserves before it runs.
func withoutNew(before, after map[string]keyState, prefix string) map[string]keyState {
	for key := range after {
		if _, was := before[key]; !was && strings.HasPrefix(key, prefix) {
			delete(after, key)
		}
	}
	return after
}

// TestPermitSetPermitsChannelRefused: a PermitSemaphore.SetPermits that
// changes the total publishes it; by an ACL user without the semaphore's
// channel it moved the free count, then failed at its publish: the caller
// got an error with the total changed. It is refused before it writes
// (NO_PUBLISH): every key keeps its value and life.
func TestPermitSetPermitsChannelRefused(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	ps := mustPermits(t, app, "ps")
	before := keysState(t, n)
	err := ps.SetPermits(ctx, 3)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("SetPermits with no count by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, withoutNew(before, keysState(t, n), "redisson_sc_latch:")); len(diff) > 0 {
		t.Errorf("SetPermits with no count refused (%v), yet it wrote: %v", err, diff)
	}
	aps := mustPermits(t, admin, "ps")
	if ok, err := aps.TrySetPermits(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	before = keysState(t, n)
	err = ps.SetPermits(ctx, 5)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("SetPermits by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, withoutNew(before, keysState(t, n), "redisson_sc_latch:")); len(diff) > 0 {
		t.Errorf("SetPermits refused (%v), yet it wrote: %v", err, diff)
	}
	// An equal total publishes nothing, and is not refused.
	if err := ps.SetPermits(ctx, 2); err != nil {
		t.Errorf("SetPermits to the same total: %v", err)
	}
}
