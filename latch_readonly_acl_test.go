package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestAwaitUnderReadOnlyScriptACL: a process that only awaits a latch may
// run as an ACL user allowed EVALSHA_RO but not EVALSHA (the read-only
// script commands). Await reads the count from the primary as EVALSHA
// (readPrimary); refused that, it reads it as EVALSHA_RO, as before, rather
// than fail with NOPERM.
func TestAwaitUnderReadOnlyScriptACL(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	admin := newTestClient(t, node.Client(t), prefix)
	if err := node.Do(t, "ACL", "SETUSER", "awaiter", "on", "nopass", "~*", "&*", "+@all", "-evalsha", "-eval").Error(); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, node.Client(t, func(o *rueidis.ClientOption) { o.Username = "awaiter" }), prefix)
	ctx := testCtx(t, 20*time.Second)
	al, err := admin.CountDownLatch("l")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := al.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	l, err := c.CountDownLatch("l")
	if err != nil {
		t.Fatal(err)
	}
	// Refused EVALSHA, the read goes out as EVALSHA_RO: the wait runs out
	// (a NOPERM fails it).
	awaitRunsOut(t, ctx, l, time.Second)
	go func() { time.Sleep(300 * time.Millisecond); _ = al.CountDown(ctx) }()
	if err := l.Await(ctx); err != nil {
		t.Fatalf("Await: %v", err)
	}
}
