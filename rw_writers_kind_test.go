package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The pending-writer key holds a value of another type (an application's
// key of that name): a write acquisition fails, and takes no lock with it,
// which no one would hold for the whole lease.
func TestRWMutexWritersKeyOtherType(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	rw := mustRW(t, c, "rw:writers-kind")
	node.Do(t, "SET", rw.writers, "not a sorted set")
	if _, err := rw.TryLock(ctx, 0); err == nil {
		t.Fatal("write lock taken beside a pending-writer key of another type")
	}
	if exists(t, node, rw.Key()) {
		pttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64()
		t.Fatalf("a failed write acquisition left the lock held (PTTL %d ms)", pttl)
	}
	if tok, _ := node.Do(t, "EXISTS", rw.fence).AsInt64(); tok != 0 {
		t.Fatal("a failed write acquisition drew a fencing token")
	}
}
