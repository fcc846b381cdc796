package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An undo of an attempt of unknown outcome reads the owner's holds on the
// server and gives back those this Client does not know of. While another
// goroutine of the same owner (WithOwner) has been granted the lock on the
// server but has not registered that grant yet, the undo must wait for it:
// else it takes that grant, and the goroutine's lock context lives on with
// nothing held on the server.
func TestUndoSparesSharedOwnersUnregisteredGrant(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-shared")
	ctx := testCtx(t, 20*time.Second)
	octx := WithOwner(ctx, "x")
	_, field, _ := c.owner(octx, m)

	undone := make(chan error, 1)
	c.setGrantHook(func() {
		// As the undo of another attempt of owner x would run in the
		// background: the server has granted this one, the Client does not
		// know of it yet.
		go func() {
			uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			undone <- c.undo(uctx, m, field, c.cfg.lease, 0, false)
		}()
		select {
		case err := <-undone:
			undone <- err
		case <-time.After(500 * time.Millisecond):
		}
	})
	lctx, err := m.Lock(octx)
	c.setGrantHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(lctx)
	if err := <-undone; err != nil {
		t.Fatalf("undo: %v", err)
	}
	st, err := m.State(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if lctx.Err() == nil && st.HoldCount != 1 {
		t.Fatalf("owner x's lock context is alive with %d holds on the server, want 1: the undo took its grant before it was registered", st.HoldCount)
	}
}
