package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An acquisition that re-enters a hold the Client has no record of (an
// orphan, left by an attempt whose reply was lost) gives it back at once on
// the caller's goroutine; a client wrapper's panic there reaches the caller,
// and the give-back goes on in the background, as a settling undo's does:
// the lock is not held by nobody until its lease ends.
func TestOrphanUndoPanicUndoneLater(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Do" || c.method == "DoMulti" })
	c := newTestClient(t, rc)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "orphan-undo-panic")
	field := c.fieldOf(m, "owner-x")
	raw := node.Client(t)
	if err := raw.Do(ctx, raw.B().Hset().Key(m.Key()).FieldValue().FieldValue(field, "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Do(ctx, raw.B().Pexpire().Key(m.Key()).Milliseconds(time.Minute.Milliseconds()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	c.setGrantHook(func() { rc.left.Store(1) }) // the orphan's undo panics
	p := panicked(func() { _, _ = m.Lock(WithOwner(ctx, "owner-x")) })
	c.setGrantHook(nil)
	if p == nil {
		t.Fatal("Lock did not panic")
	}
	if rc.left.Load() != 0 {
		t.Fatal("the undo was not made")
	}
	if !eventually(5*time.Second, func() bool {
		n, err := raw.Do(ctx, raw.B().Exists().Key(m.Key()).Build()).AsInt64()
		return err == nil && n == 0
	}) {
		pttl, _ := raw.Do(ctx, raw.B().Pttl().Key(m.Key()).Build()).AsInt64()
		t.Fatalf("the orphaned hold was not given back: the lock is still held, for %d ms more", pttl)
	}
}
