package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiting Lock's later attempt, whose calls Close may cut off and so run
// on a goroutine of their own, meets a client wrapper that panics: the
// panic reaches Lock's caller, as it does on a first attempt (the caller
// recovers, as net/http does), rather than crash the process from that
// goroutine. The Client goes on: the lock can be taken after it.
func TestCutCallPanicReachesCaller(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	// The next call of a wait's later attempt (its context marked
	// cutCallKey) panics.
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool {
		return (c.method == "Do" || c.method == "DoMulti") && c.ctx.Value(cutCallKey{}) != nil
	})
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	hm := mustMutex(t, h, "cut-panic")
	hl, err := hm.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := mustMutex(t, c, "cut-panic")
	rc.left.Store(1)
	if p := panicked(func() { _, _ = m.Lock(ctx) }); p == nil {
		t.Fatal("Lock did not panic")
	}
	if err := hm.Unlock(hl); err != nil {
		t.Fatal(err)
	}
	l, err := m.TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("TryLock after the wrapper's panic: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
