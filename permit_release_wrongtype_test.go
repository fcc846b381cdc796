package scriptlock

import (
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A PermitSemaphore.Release on a name whose lease set ({name}:timeout) is a
// key of another type fails with WRONGTYPE and changes nothing in Redis: no
// record of the call is left behind either.
func TestPermitReleaseWrongTypeLeavesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "wrongtype-leases")
	node.Do(t, "SET", p.Key(), "1")
	node.Do(t, "SET", redissonSuffix(p.Key(), "timeout"), "x")
	before := dbsize(t, node)
	if err := p.Release(ctx, randomID()); err == nil {
		t.Fatal("Release beside a lease set of another type succeeded")
	}
	if n := dbsize(t, node); n != before {
		keys, _ := node.Do(t, "KEYS", "*").AsStrSlice()
		slices.Sort(keys)
		t.Fatalf("Release that failed left %d keys where there were %d: %v", n, before, keys)
	}
}
