package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stuckLog is a log handler whose writes block until release is closed (a
// log pipe nobody reads, a collector that stopped).
type stuckLog struct{ release chan struct{} }

func (s stuckLog) Enabled(context.Context, slog.Level) bool { return true }
func (s stuckLog) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s stuckLog) WithGroup(string) slog.Handler            { return s }
func (s stuckLog) Handle(context.Context, slog.Record) error {
	<-s.release
	return nil
}

// TestLossNotHeldUpByLogger: a hold's context ends at its loss deadline
// however long the Client's logger takes to write that the lock was lost or
// its lease ended: the record was written before the context was cancelled,
// so with a log sink that stalled the owner worked on under a lock whose
// lease had run out (or that a renewal found gone), for as long as the sink
// stalled.
func TestLossNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sink := stuckLog{release: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(sink)), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	// Let the loggers go before the Client closes (Close waits for them).
	t.Cleanup(func() { close(sink.release) })
	ctx := testCtx(t, 30*time.Second)
	const lease = 500 * time.Millisecond
	leased := mustMutex(t, c, "slow-log-lease")
	sent := time.Now()
	lctx, err := leased.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	renewed := mustMutex(t, c, "slow-log-renewed")
	wctx, err := renewed.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Gone from the server: the next renewal finds it so.
	node.Do(t, "DEL", renewed.Key())
	gone := time.Now()
	for name, h := range map[string]struct {
		ctx context.Context
		by  time.Time
	}{
		"lease ran out":         {lctx, lossDeadline(sent, lease)},
		"renewal found it gone": {wctx, gone.Add(600 * time.Millisecond)},
	} {
		select {
		case <-h.ctx.Done():
			if cause := context.Cause(h.ctx); !errors.Is(cause, ErrLockLost) {
				t.Errorf("%s: lock context ended with %v, want ErrLockLost", name, cause)
			}
		case <-time.After(time.Until(h.by.Add(guardLate))):
			t.Errorf("%s: lock context still live %s past its loss deadline while the logger's write of the loss is stuck", name, guardLate)
		}
	}
}

// The same for a RedLock that loses its quorum: it was logged before its
// context was cancelled.
func TestRedLockLossNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	loseRedLockQuorumLoggerStuck(t, "job-stuck-log")
}

// loseRedLockQuorumLoggerStuck locks a RedLock of the given name on three
// nodes whose Clients log to a stuckLog, makes two of the nodes stop
// answering and waits, at most 5s, for the lock's context to end with
// ErrLockLost. The nodes answer again and the log is released when the test
// ends.
func loseRedLockQuorumLoggerStuck(t *testing.T, name string) ([]*redistest.Node, *RedLock) {
	t.Helper()
	sink := stuckLog{release: make(chan struct{})}
	nodes, cs, pxs := proxiedNodes(t, 3, WithLogger(slog.New(sink)))
	t.Cleanup(func() { close(sink.release) }) // before the Clients close
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, name, cs, WithWatchdog(stuckLogLease, 600*time.Millisecond),
		WithClockDrift(0.4, 0), WithNodeTimeout(300*time.Millisecond))
	// Every node granted: node 0 is the one left holding the lost lock
	// (TestRedLockGiveBackNotHeldUpByLogger checks its give-back); a node 0
	// answering past the node timeout would hold nothing to give back.
	lctx := lockEveryNode(t, ctx, r)
	pxs[1].Freeze()
	pxs[2].Freeze()
	t.Cleanup(pxs[1].Thaw)
	t.Cleanup(pxs[2].Thaw)
	select {
	case <-lctx.Done():
		if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
			t.Fatalf("lock context ended with %v, want ErrLockLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lock context alive 5s after two of three nodes stopped answering, the logger's write of the loss stuck")
	}
	return nodes, r
}

// stuckLogLease is the lease of loseRedLockQuorumLoggerStuck's RedLock.
const stuckLogLease = 2 * time.Second

// A renewal round that finds several holds gone ends them all before it
// logs any: the first one's record, written before the next hold was
// ended, kept that hold's owner working under a lock found gone until the
// write returned (or its own loss deadline passed).
func TestLostTogetherNotHeldUpByLogger(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sink := stuckLog{release: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(sink)), WithWatchdog(5*time.Second, 200*time.Millisecond))
	t.Cleanup(func() { close(sink.release) })
	ctx := testCtx(t, 30*time.Second)
	var ctxs []context.Context
	for _, name := range []string{"together-a", "together-b", "together-c"} {
		m := mustMutex(t, c, name)
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		node.Do(t, "DEL", m.Key())
		ctxs = append(ctxs, lctx)
	}
	// The first renewal, a round for all three, finds them gone.
	limit := time.After(2 * time.Second)
	for i, lctx := range ctxs {
		select {
		case <-lctx.Done():
		case <-limit:
			t.Fatalf("hold %d: lock context live 2s after its lock was deleted, renewed every 200ms, another hold's record of its loss stuck in the logger", i)
		}
	}
}
