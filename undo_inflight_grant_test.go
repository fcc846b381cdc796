package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// readHook is a Mutex whose undo runs before ahead of its first read of
// the owner's hold count, and after once that read has returned.
type readHook struct {
	*Mutex
	once, onceAfter sync.Once
	before, after   func()
}

func (r *readHook) holdsOf(ctx context.Context, field string) (int64, error) {
	if r.before != nil {
		r.once.Do(r.before)
	}
	n, err := r.Mutex.holdsOf(ctx, field)
	if r.after != nil {
		r.onceAfter.Do(r.after)
	}
	return n, err
}

// An undo of an owner shared through its context (WithOwner) spares a grant
// the owner received while the undo read its hold count: the grant was on the
// server, its reply not yet registered, and the undo, finding a hold the
// Client did not know of, gave it back. The owner's Lock then returned a
// lock context for a lock nobody held, which another owner took.
func TestUndoSparesGrantDuringItsRead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-read")
	ctx := testCtx(t, 20*time.Second)
	owner := WithOwner(ctx, "worker")
	field := c.fieldOf(m, "worker")

	granted, proceed, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var lctx context.Context
	var lerr error
	p := &readHook{Mutex: m, before: func() {
		// A Lock of the owner starts after the undo looked for the owner's
		// acquisitions in flight, and is granted before the read.
		c.setGrantHook(func() {
			close(granted)
			<-proceed
		})
		go func() {
			defer close(done)
			lctx, lerr = m.Lock(owner)
		}()
		<-granted
	}}
	undone := make(chan error, 1)
	go func() { undone <- c.undo(ctx, p, field, m.cfg.watchdogLease, 0, false) }()
	<-granted
	var early error
	finished := false
	select {
	case early = <-undone:
		finished = true // it did not wait for the grant to register
	case <-time.After(300 * time.Millisecond):
	}
	close(proceed)
	<-done
	c.setGrantHook(nil)
	if lerr != nil {
		t.Fatalf("Lock: %v", lerr)
	}
	defer m.Unlock(lctx)
	if !finished {
		select {
		case early = <-undone:
		case <-time.After(5 * time.Second):
			t.Fatal("undo still running 5 s after the grant registered")
		}
	}
	if early != nil {
		t.Fatalf("undo: %v", early)
	}
	st, err := m.State(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Locked || st.HoldCount != 1 {
		t.Fatalf("after the undo the owner's Lock returned with State %+v: the undo gave back the grant that Lock registered", st)
	}
}

// An undo of an owner shared through its context spares the owner's holds
// when the owner releases one of them right after the undo read the count:
// the count it read was one too high for the holds the Client still knew
// of, and the undo gave back the owner's last hold, which another goroutine
// of the owner still held (its lock context alive, the lock free for anyone).
func TestUndoSparesHoldsAcrossOwnersRelease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-release")
	ctx := testCtx(t, 20*time.Second)
	owner := WithOwner(ctx, "worker")
	field := c.fieldOf(m, "worker")
	first, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	p := &readHook{Mutex: m, after: func() {
		// One goroutine of the owner unlocks as the read's reply is on
		// its way.
		if err := m.Unlock(second); err != nil {
			t.Errorf("Unlock: %v", err)
		}
	}}
	if err := c.undo(ctx, p, field, m.cfg.watchdogLease, 0, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	st, err := m.State(first)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Locked || st.HoldCount != 1 || first.Err() != nil {
		t.Fatalf("after the undo State is %+v (context %v): want the owner's one remaining hold", st, first.Err())
	}
	if err := m.Unlock(first); err != nil {
		t.Fatalf("Unlock of the remaining hold: %v", err)
	}
}

// Two undos of one owner shared through its context, each finding one hold
// more on the server than the Client knows of, give back that one hold
// between them, not two: the second read the count before the first's
// release ran, and both released, the second taking the owner's own hold.
func TestConcurrentUndosReleaseOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "undo-twice")
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
	if err := c.undo(ctx, m, field, m.cfg.watchdogLease, 0, false); err != nil {
		t.Fatalf("second undo: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first undo: %v", err)
	}
	st, err := m.State(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Locked || st.HoldCount != 1 || lctx.Err() != nil {
		t.Fatalf("after both undos State is %+v (context %v): want the owner's own hold", st, lctx.Err())
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
