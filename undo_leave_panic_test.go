package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUndoLeavePanicUnmarksLine: the background undo of an attempt of
// unknown outcome of an owner shared through its context marks the
// owner's line as being left, then leaves it; a panic there (a client
// wrapper's, in the leave) is logged, and the owner's next wait does not
// wait for that leave. The mark stayed: every later Lock of the owner
// waited for a leave that was over, until its context ended.
func TestUndoLeavePanicUnmarksLine(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var logs syncBuffer
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(time.Minute), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	f := mustFair(t, c, "undo-leave-panic")
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker")
	field := c.id + ":worker"
	hooked := make(chan struct{})
	c.testHookLeaveLate = func() {
		close(hooked)
		panic("client wrapper panicked")
	}
	ended := &waitEnd{wait: -1}
	ended.over.Store(true)
	const lease = 30 * time.Second
	c.undoLaterQueued(f, field, lease, time.Now().Add(lease), 0, ended)
	select {
	case <-hooked:
	case <-time.After(10 * time.Second):
		t.Fatal("the undo never came to leave the line")
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "client wrapper panicked") }) {
		t.Fatalf("the leave's panic was not logged: %s", logs.String())
	}
	lctx, cancel := context.WithTimeout(owner, 3*time.Second)
	defer cancel()
	held, err := f.Lock(lctx)
	if err != nil {
		t.Fatalf("Lock of the owner after the undo's leave panicked: %v", err)
	}
	if err := f.Unlock(held); err != nil {
		t.Fatal(err)
	}
}
