package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestLatchCountDownChannelRefusedChangesNothing: a CountDown to zero whose
// "zero" message the ACL user may not publish (Redis 7 gives a new user no
// channel) fails and leaves the latch counting; the latch was deleted before
// the PUBLISH was refused, so the call failed with the latch released and
// its waiters not told.
func TestLatchCountDownChannelRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 20*time.Second)
	al, _ := admin.CountDownLatch("l")
	if ok, err := al.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount: %v %v", ok, err)
	}
	l, _ := app.CountDownLatch("l")
	// 2 -> 1 publishes nothing: allowed.
	if err := l.CountDown(ctx); err != nil {
		t.Fatalf("CountDown to 1: %v", err)
	}
	err := l.CountDown(ctx)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("CountDown to 0 by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if got := countAt(t, n, l.Key()); got != 1 {
		t.Fatalf("CountDown failed (%v), yet the count is %d, not 1", err, got)
	}
}
