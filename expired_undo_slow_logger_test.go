package scriptlock

import (
	"log/slog"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestExpiredUndoNotHeldUpByLogger: a hold whose loss deadline passes gives
// back what an Extend or renewal may have extended on the server however
// long the logger takes to write that its lease ended: the undo was started
// only once the record was written, so with a log sink that stalled the
// lock stayed held, by nobody, until what was set on the server ran out.
func TestExpiredUndoNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sink := stuckLog{release: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(sink)))
	t.Cleanup(func() { close(sink.release) }) // before the Client closes
	m := mustMutex(t, c, "expired-undo-stuck-log")
	g := &gatedMutex{Mutex: m, entered: make(chan struct{}), gate: make(chan struct{})}
	close(g.gate) // the undo's release goes through
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-42")
	warmShared(t, m)
	lctx, err := c.acquire(ctx, g, -1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// An Extend has set the lock's expiry since the grant: what it set is
	// the undo's to give back.
	if err := c.extend(ctx, lctx, g, time.Second); err != nil {
		t.Fatal(err)
	}
	g.armed.Store(true)
	<-lctx.Done() // the loss deadline: the undo starts
	select {
	case <-g.entered:
	case <-time.After(3 * time.Second):
		t.Fatal("no undo release 3s after the loss deadline, the logger's write of the lease's end stuck")
	}
}
