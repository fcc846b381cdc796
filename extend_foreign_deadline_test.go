package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Extend whose call shares its connection with another call that has a
// shorter deadline, on a slow link: rueidis fails every call on the
// connection with context.DeadlineExceeded when that call's deadline breaks
// it. As on any broken connection, the Extend is made again within its
// context; it failed with "context deadline exceeded" while its own context
// had seconds left.
func TestExtendBesideForeignDeadline(t *testing.T) {
	t.Parallel()
	const oneWay, lease = 200 * time.Millisecond, time.Minute
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := px.Client(t)
	c := newTestClient(t, rc)
	m, err := c.Mutex("m")
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := m.LockWithLease(testCtx(t, 10*time.Second), lease)
	if err != nil {
		t.Fatalf("LockWithLease: %v", err)
	}
	// Scripts loaded, and the connection used with deadlines only.
	if err := m.Extend(testCtx(t, 10*time.Second), lctx, lease); err != nil {
		t.Fatalf("warm-up Extend: %v", err)
	}
	px.Delay(oneWay)
	// Alone on the connection, with a deadline shorter than its round trip:
	// it breaks the connection under the next call.
	done := make(chan struct{})
	go func() {
		defer close(done)
		short, cancel := context.WithTimeout(context.Background(), oneWay)
		defer cancel()
		rc.Do(short, rc.B().Ping().Build())
	}()
	time.Sleep(oneWay / 4)
	ctx := testCtx(t, 20*time.Second)
	start := time.Now()
	err = m.Extend(ctx, lctx, lease)
	<-done
	if err != nil && ctx.Err() == nil {
		t.Fatalf("Extend failed after %v of its 20 s context: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if lctx.Err() != nil {
		t.Fatalf("the hold ended: %v", context.Cause(lctx))
	}
}
