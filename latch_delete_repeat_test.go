package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Delete whose reply was lost is made again and answers as the first
// attempt did; when another caller set a new count in between, the repeat
// must not announce a zero: "0" opens a Redisson waiter's latch that the new
// count's "1" closed, and that waiter then reads the count in a loop, one
// GET after another without pause, until the count reaches zero.
func TestLatchDeleteRepeatAfterNewCountAnnouncesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	ctx := testCtx(t, 30*time.Second)
	p := redistest.Prefix(t)
	latch, channel := p+"latch", "redisson_countdownlatch__channel__{"+p+"latch}"
	set, record := "redisson_countdownlatch_latch:{"+p+"latch}:set", "redisson_countdownlatch_latch:{"+p+"latch}:client:7"

	l := listen(t, node, channel)
	next := func(string) string { return strings.TrimPrefix(l.next(t, 2*time.Second), channel+" ") }

	if ok, err := generated.LatchTrySet(ctx, rc, latch, channel, set, 2, "client:1", "publish", time.Minute); err != nil || !ok {
		t.Fatalf("LatchTrySet: %v, %v", ok, err)
	}
	if m := next("TrySetCount"); m != "1" {
		t.Fatalf("TrySetCount published %q, want \"1\"", m)
	}
	if ok, err := generated.RecordReserve(ctx, rc, record, 20*time.Second); err != nil || !ok {
		t.Fatalf("RecordReserve: %v, %v", ok, err)
	}
	if ok, err := generated.LatchDelete(ctx, rc, latch, channel, record, "publish", time.Minute, time.Millisecond); err != nil || !ok {
		t.Fatalf("LatchDelete: %v, %v", ok, err)
	}
	if m := next("Delete"); m != "0" {
		t.Fatalf("Delete published %q, want \"0\"", m)
	}
	// Another caller starts the latch again.
	if ok, err := generated.LatchTrySet(ctx, rc, latch, channel, set, 3, "client:2", "publish", time.Minute); err != nil || !ok {
		t.Fatalf("LatchTrySet again: %v, %v", ok, err)
	}
	if m := next("TrySetCount again"); m != "1" {
		t.Fatalf("TrySetCount published %q, want \"1\"", m)
	}
	// The repeat of the Delete (its reply lost) answers as the first did and
	// deletes nothing.
	if ok, err := generated.LatchDelete(ctx, rc, latch, channel, record, "publish", time.Minute, time.Millisecond); err != nil || !ok {
		t.Fatalf("LatchDelete repeated: %v, %v", ok, err)
	}
	select {
	case m := <-l.ch:
		t.Fatalf("the repeat of Delete, made while a new count was set, published %q: a Redisson waiter's closed latch is opened", strings.TrimPrefix(m, channel+" "))
	case <-time.After(500 * time.Millisecond):
	}
	if n, err := generated.LatchCount(ctx, rc, latch); err != nil || n != 3 {
		t.Fatalf("count after the repeat = %d, %v; want 3", n, err)
	}
}
