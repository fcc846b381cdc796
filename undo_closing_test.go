package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two undos of one owner shared through its context that each found a hold
// on the server the Client did not know of give back that one hold between
// them also while Close waits for an acquisition in flight: the second no
// longer waited for the first's release once Close had begun, read the count
// before that release ran, and both released, the second taking the owner's
// own hold while its lock context was still live (Close ends it only once
// the acquisitions in flight are over).
func TestConcurrentUndosDuringCloseReleaseOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-closing")
	busy := mustMutex(t, c, "undo-closing-busy")
	ctx := testCtx(t, 20*time.Second)
	owner := WithOwner(ctx, "worker")
	field := c.fieldOf(m, "worker")
	lctx, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	// A hold the Client does not know of: an acquisition whose reply was lost.
	if err := node.Do(t, "HINCRBY", m.key, field, "1").Error(); err != nil {
		t.Fatal(err)
	}
	// An acquisition in flight that Close waits for.
	granted, proceed := make(chan struct{}), make(chan struct{})
	c.setGrantHook(func() {
		close(granted)
		<-proceed
	})
	defer func() { c.setGrantHook(nil) }()
	acquired := make(chan struct{})
	go func() {
		defer close(acquired)
		_, _ = busy.Lock(ctx)
	}()
	<-granted
	c.setGrantHook(nil)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.Close()
	}()
	if !eventually(5*time.Second, func() bool { return c.isClosing.Load() }) {
		t.Fatal("Close never began")
	}
	g := &gatedMutex{Mutex: m, entered: make(chan struct{}), gate: make(chan struct{})}
	g.armed.Store(true)
	first := make(chan error, 1)
	go func() { first <- c.undo(ctx, g, field, m.cfg.watchdogLease, 0, false) }()
	select {
	case <-g.entered: // decided, its release on its way
	case <-time.After(5 * time.Second):
		t.Fatal("the first undo made no release")
	}
	time.AfterFunc(300*time.Millisecond, func() { close(g.gate) })
	second := c.undo(ctx, m, field, m.cfg.watchdogLease, 0, false)
	ferr := <-first
	n, err := m.holdsOf(ctx, field)
	live := lctx.Err() == nil
	close(proceed)
	<-acquired
	<-closed
	if err != nil {
		t.Fatal(err)
	}
	if second != nil || ferr != nil {
		t.Fatalf("undos: %v, %v", ferr, second)
	}
	if live && n != 1 {
		t.Fatalf("after both undos the server has %d holds of the owner, whose lock context is live: want its own 1", n)
	}
}
