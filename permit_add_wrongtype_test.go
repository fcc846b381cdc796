package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A PermitSemaphore.AddPermits on a name whose lease set ({name}:timeout) is
// a key of another type fails with ErrWrongKind (WRONGTYPE) and changes
// nothing in Redis, as Release and the other calls there do: it added the
// permits, and its PERSIST dropped that key's TTL.
func TestPermitAddPermitsWrongTypeLeavesNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, "add-wrongtype-leases")
	node.Do(t, "SET", p.Key(), "1")
	leases := redissonSuffix(p.Key(), "timeout")
	node.Do(t, "HSET", leases, "f", "v")
	node.Do(t, "PEXPIRE", leases, "100000")
	before := dumpKeys(t, node)
	v, err := p.AddPermits(ctx, 2)
	if !errors.Is(err, ErrWrongKind) {
		t.Errorf("AddPermits beside a lease set of another type = %d, %v; want ErrWrongKind", v, err)
	}
	if after := dumpKeys(t, node); after != before {
		t.Errorf("AddPermits that failed changed\n%s\ninto\n%s", before, after)
	}
	if ttl, _ := node.Do(t, "PTTL", leases).AsInt64(); ttl <= 0 {
		t.Errorf("AddPermits that failed dropped the TTL of %s: PTTL %d", leases, ttl)
	}
}
