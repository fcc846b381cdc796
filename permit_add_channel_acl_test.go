package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestPermitAddPermitsChannelRefusedChangesNothing: a PermitSemaphore's
// AddPermits whose message the ACL user may not publish (Redis 7 gives a new
// user no channel) fails and adds nothing; the permits were added before the
// PUBLISH was refused, so adding again on the error added them twice.
func TestPermitAddPermitsChannelRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 20*time.Second)
	as, _ := admin.PermitSemaphore("ps")
	if ok, err := as.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits: %v %v", ok, err)
	}
	s, _ := app.PermitSemaphore("ps")
	_, err := s.AddPermits(ctx, 2)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("AddPermits by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if got := countAt(t, n, s.Key()); got != 1 {
		t.Fatalf("AddPermits failed (%v), yet the count is %d, not 1", err, got)
	}
}
