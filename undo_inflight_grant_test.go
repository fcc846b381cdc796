package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// readHook is a Mutex whose undo runs before at its first read of the
// owner's hold count.
type readHook struct {
	*Mutex
	once   sync.Once
	before func()
}

func (r *readHook) holdsOf(ctx context.Context, field string) (int64, error) {
	r.once.Do(r.before)
	return r.Mutex.holdsOf(ctx, field)
}

// An undo of an owner shared through its context (WithOwner) spares a grant
// the owner received while the undo read its hold count: the grant was on the
// server, its reply not yet registered, and the undo, finding a hold the
// Client did not know of, gave it back. The owner's Lock then returned a
// lock context for a lock nobody held, which another owner took.
func TestUndoSparesGrantDuringItsRead(t *testing.T) {
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
		grantHook = func() {
			close(granted)
			<-proceed
		}
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
	grantHook = nil
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
