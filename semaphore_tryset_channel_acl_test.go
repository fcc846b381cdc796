package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestSemaphoreTrySetPermitsChannelRefusedChangesNothing: a TrySetPermits
// whose message the ACL user may not publish (Redis 7 gives a new user no
// channel) fails and sets nothing; the count was set before the PUBLISH was
// refused, so the call failed with the semaphore counting.
func TestSemaphoreTrySetPermitsChannelRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 20*time.Second)
	s, _ := app.Semaphore("s")
	ok, err := s.TrySetPermits(ctx, 3)
	if ok || !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("TrySetPermits by a user without the channel: %v %v, want false, generated.ErrNoPublish", ok, err)
	}
	if got, _ := n.Do(t, "EXISTS", s.Key()).AsInt64(); got != 0 {
		t.Fatalf("TrySetPermits failed (%v), yet the semaphore %q exists", err, s.Key())
	}
}
