package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyUndoTimes is panickyUndoClient panicking on its next left calls
// of the undo only.
type panickyUndoTimes struct {
	panickyUndoClient
	left atomic.Int64
}

func (p *panickyUndoTimes) hit(cmd rueidis.Completed) bool {
	return p.is(cmd) && p.left.Add(-1) >= 0
}

func (p *panickyUndoTimes) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if p.hit(cmd) {
		panic("client wrapper panicked")
	}
	return p.Client.Do(ctx, cmd)
}

func (p *panickyUndoTimes) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		if p.hit(cmd) {
			panic("client wrapper panicked")
		}
	}
	return p.Client.DoMulti(ctx, multi...)
}

// The background undo of a Semaphore acquisition of unknown outcome meets
// a client wrapper that panics on its first calls: each panic is taken as
// an undo that failed, logged, and the undo is made again, as after an
// error, within its bound, so the permit the acquisition took comes back
// once the wrapper lets the undo through. The first panic ended the undo,
// and the permit, which has no lease, was lost for good.
func TestBackgroundUndoPanicRetried(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	cmd, err := generated.SemaphoreUndoCommand(node.Client(t), "k", "c", "l", "d", time.Minute, "publish")
	if err != nil {
		t.Fatal(err)
	}
	rc := &panickyUndoTimes{panickyUndoClient: panickyUndoClient{Client: px.Client(t), sha: cmd.Commands()[1]}}
	var logs syncBuffer
	c := newTestClient(t, rc, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	sem := mustSem(t, c, "undo-panic-retried")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rc.left.Store(3)
	px.FreezeReplies()
	err = sem.TryAcquire(ctx, 1, 300*time.Millisecond)
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		px.Thaw()
		t.Fatalf("TryAcquire, replies held back: %v, want a NotAcquiredError with Unanswered", err)
	}
	if n := countAt(t, node, sem.Key()); n != 0 {
		px.Thaw()
		t.Fatalf("the attempt took no permit: %d available", n)
	}
	if !eventually(5*time.Second, func() bool { return rc.left.Load() < 0 }) {
		px.Thaw()
		t.Fatalf("the undo was not made again after its call panicked (%d panics to go); log:\n%s", rc.left.Load(), logs.String())
	}
	px.Thaw()
	if !eventually(5*time.Second, func() bool { return countAt(t, node, sem.Key()) == 1 }) {
		t.Fatalf("the permit the attempt took did not come back: %d available", countAt(t, node, sem.Key()))
	}
	if !strings.Contains(logs.String(), "panic recovered") {
		t.Fatalf("the undo's panic was not logged; log:\n%s", logs.String())
	}
}
