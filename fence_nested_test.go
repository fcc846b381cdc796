package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock that hands out no fencing token (an unfenced LeanMutex, a read
// hold), taken inside the context of a lock that does: Fence of its context
// reports no token, rather than the outer lock's, which another name's
// counter drew and which says nothing of this lock's holders.
func TestFenceOfTokenlessLockInsideAnother(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "outer")
	outer, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(outer)
	lean := mustLean(t, c, "inner-lean")
	rw := mustRW(t, c, "inner-rw")
	for _, k := range []struct {
		name string
		lock func(context.Context) (context.Context, error)
	}{
		{"unfenced LeanMutex", lean.Lock},
		{"RWMutex read hold", rw.RLock},
	} {
		inner, err := k.lock(outer)
		if err != nil {
			t.Fatal(err)
		}
		if tok, ok := Fence(inner); ok {
			t.Errorf("%s inside a Mutex's lock context: Fence = %d, true (the Mutex's token); want none", k.name, tok)
		}
		if tok, ok := FenceOf(inner, "outer"); !ok || tok <= 0 {
			t.Errorf("%s: FenceOf(outer) = %d, %v; want the outer Mutex's token", k.name, tok, ok)
		}
	}
}
