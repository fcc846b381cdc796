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
	// Long enough that the grant and the Extend are back before the loss
	// deadline, and the undo starts before its bound (the lease from the
	// deadline), on a loaded machine too.
	const lease = 2 * time.Second
	lctx, err := c.acquire(ctx, g, -1, lease)
	if err != nil {
		t.Fatal(err)
	}
	// An Extend has set the lock's expiry since the grant: what it set is
	// the undo's to give back.
	if err := c.extend(ctx, lctx, g, lease); err != nil {
		t.Fatal(err)
	}
	// The server lease outlasts the loss deadline, as one a renewal or
	// Extend in flight set would: the undo finds the hold there and sends
	// its release. (The lease the Extend set ends a drift margin, 45 ms,
	// after the deadline: an undo that read the count later than that on a
	// loaded machine found nothing to give back and sent no release, with
	// no logger in its way.)
	node.Do(t, "PEXPIRE", m.key, "20000")
	g.armed.Store(true)
	<-lctx.Done() // the loss deadline: the undo starts
	// Every write of the logger blocks until the test ends: an undo behind
	// any of them sends no release, however long this waits.
	const bound = 10 * time.Second
	select {
	case <-g.entered:
	case <-time.After(bound):
		t.Fatalf("no undo release %s after the loss deadline, the logger's write of the lease's end stuck", bound)
	}
	// The release went through: the lock is free.
	deadline := time.Now().Add(bound)
	for {
		if n, err := node.Do(t, "EXISTS", m.key).AsInt64(); err != nil {
			t.Fatal(err)
		} else if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock still held %s after the undo's release was sent", bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
