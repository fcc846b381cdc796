package scriptlock

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// failFirstMutex's first release sent once armed fails (its connection
// broken: the release makes it again three times by itself, and those fail
// too); again is closed when the next one is sent. Not an error reply: the
// undo tries no more after one of those (refusedForGood).
type failFirstMutex struct {
	*Mutex
	armed atomic.Int32 // the attempts left to fail
	again chan struct{}
}

func (g *failFirstMutex) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	if g.armed.Add(-1) >= 0 {
		return 0, 0, io.ErrUnexpectedEOF
	}
	select {
	case <-g.again:
	default:
		close(g.again)
	}
	return g.Mutex.releaseOnce(ctx, field, r)
}

// TestUndoRetryNotHeldUpByLogger: a background undo whose attempt failed
// tries again however long the logger takes to write the failure (DEBUG):
// the record was written before the next attempt, so with a log sink that
// stalled the lock stayed held, by nobody, until what was set on the server
// ran out, and its waiters waited that long.
func TestUndoRetryNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sink := stuckLog{release: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(sink)))
	t.Cleanup(func() { close(sink.release) }) // before the Client closes
	m := mustMutex(t, c, "undo-retry-stuck-log")
	g := &failFirstMutex{Mutex: m, again: make(chan struct{})}
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-42")
	warmShared(t, m)
	lctx, err := c.acquire(ctx, g, -1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// An Extend has set the lock's expiry since the grant: what it set is
	// the undo's to give back.
	if err := c.extend(ctx, lctx, g, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	// Longer on the server than the Client counts on: the undo's next
	// attempt, however late, still finds the hold there to give back.
	node.Do(t, "PEXPIRE", m.Key(), "20000")
	g.armed.Store(4)
	<-lctx.Done() // the loss deadline: the undo starts, and its first release fails
	select {
	case <-g.again:
	case <-time.After(3 * time.Second):
		t.Fatal("the undo's release not sent again 3s after its first failed, the logger's write of the failure stuck")
	}
}
