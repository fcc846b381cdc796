package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestLatchChannelRefused: a CountDownLatch's TrySetCount and Delete
// publish; by an ACL user without the latch's channel they set or deleted
// the count, then failed at their publish. They are refused before they
// write (NO_PUBLISH): every key keeps its value and life.
func TestLatchChannelRefused(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	l, err := app.CountDownLatch("l")
	if err != nil {
		t.Fatal(err)
	}
	before := keysState(t, n)
	ok, err := l.TrySetCount(ctx, 2)
	if ok || !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("TrySetCount by a user without the channel: %v %v, want false, generated.ErrNoPublish", ok, err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("TrySetCount refused (%v), yet it wrote: %v", err, diff)
	}
	al, err := admin.CountDownLatch("l")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := al.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount by the admin: %v %v", ok, err)
	}
	before = keysState(t, n)
	ok, err = l.Delete(ctx)
	if ok || !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Delete by a user without the channel: %v %v, want false, generated.ErrNoPublish", ok, err)
	}
	if diff := sameKeys(before, withoutNew(before, keysState(t, n), "redisson_countdownlatch_latch:")); len(diff) > 0 {
		t.Errorf("Delete refused (%v), yet it wrote: %v", err, diff)
	}
	if got, _ := n.Do(t, "GET", al.Key()).ToString(); got != "2" {
		t.Errorf("after the refused Delete, the count is %q, want 2", got)
	}
}
