package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// wrappedPermit is a PermitSemaphore of one permit, which a Redisson client
// has taken with a lease near Long.MAX_VALUE ms: its lease end wrapped below
// 0, and no client reclaims it. It returns the semaphore and the permit's id.
func wrappedPermit(t *testing.T, node *redistest.Node, c *Client, name string) (*PermitSemaphore, string) {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	p := mustPermits(t, c, name)
	if ok, err := p.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	id := randomID()
	raw, _ := permitWire(id)
	node.Do(t, "DECR", p.Key())
	node.Do(t, "ZADD", redissonSuffix(p.Key(), "timeout"), "-9223372036854", string(raw))
	return p, id
}

// Extend of a permit whose own lease end wrapped below 0 extends it, as
// Redisson's updateLeaseTime does: that lease is over for nobody (the
// permit is held for good), so it was read as ended, the permit returned to
// the pool and ErrUnknownPermit answered. Its new lease, ending before the
// one it had, is announced to the waiters.
func TestPermitExtendOwnWrappedLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p, id := wrappedPermit(t, node, c, "wrapped-own-extend")
	msgs := listen(t, node, p.channel)
	start := time.Now().UnixMilli()
	if err := p.Extend(ctx, id, time.Minute); err != nil {
		t.Fatalf("Extend of a permit held for good: %v", err)
	}
	raw, _ := permitWire(id)
	end, err := node.Do(t, "ZSCORE", redissonSuffix(p.Key(), "timeout"), string(raw)).AsInt64()
	if err != nil || end < start+time.Minute.Milliseconds()-1000 {
		t.Fatalf("lease end after Extend = %d, %v; want about %d", end, err, start+time.Minute.Milliseconds())
	}
	if n := countAt(t, node, p.Key()); n != 0 {
		t.Fatalf("count after Extend = %d; want 0, the permit still held", n)
	}
	if m := msgs.next(t, 5*time.Second); m != p.channel+" 1" {
		t.Fatalf("message after Extend = %q; want %q", m, p.channel+" 1")
	}
}

// Release of a permit whose own lease end wrapped below 0 releases a permit
// still held: it answered ErrPermitExpired, as of a lease that had ended,
// though no client ever reclaims it.
func TestPermitReleaseOwnWrappedLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	p, id := wrappedPermit(t, node, c, "wrapped-own-release")
	if err := p.Release(ctx, id); err != nil {
		t.Fatalf("Release of a permit held for good: %v (expired: %v)", err, errors.Is(err, ErrPermitExpired))
	}
	if n := countAt(t, node, p.Key()); n != 1 {
		t.Fatalf("count after Release = %d; want 1", n)
	}
}
