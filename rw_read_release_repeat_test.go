package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read release that brought the lock's expiry forward published "1" so
// that the waiters read the new TTL. Made again (its reply lost, or its
// SPUBLISH refused) it publishes "1" again only while readers still hold
// the lock, or it is free: a writer that took the lock since is no news to
// its waiters, and "1" (a read unlock to Redisson's waiters) woke them all
// for nothing.
func TestRWReadReleaseRepeatQuietWhileWriteHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	rw := mustRW(t, c, "read-release-repeat")
	log, release, short := readReleasedBringingExpiryForward(t, ctx, node, c, rw)
	// The other reader left, and a writer took the lock.
	doAll(t, node,
		[]string{"DEL", rw.key, short},
		[]string{"HSET", rw.key, "mode", "write", "77777777-0000-8000-8000-000000000000:w:write", "1"},
	)
	if st, err := release(); err != nil || st != 2 {
		t.Fatalf("repeated read release: %d, %v; want 2, as the first attempt answered", st, err)
	}
	log.quiet(t, 300*time.Millisecond)
}

// The repeat of a read release answers from its latch whatever holds the
// name by then: the lock freed since, another kind of lock (a LeanMutex's
// string, a Mutex's hash without a mode) may have taken the name. The
// repeat must still answer the first attempt's outcome, not fail with
// Redis's WRONGTYPE, and publish nothing: no reader can enter there, and
// "1" would wake every waiter for nothing.
func TestRWReadReleaseRepeatAfterOtherKindTookName(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, kind := range otherKindLocks("77777777-0000-8000-8000-000000000000") {
		t.Run(kind.name, func(t *testing.T) {
			rw := mustRW(t, c, "read-release-repeat-kind:"+kind.name)
			log, release, short := readReleasedBringingExpiryForward(t, ctx, node, c, rw)
			// The other reader left, and the other kind of lock took the name.
			doAll(t, node, []string{"DEL", rw.key, short}, kind.take(rw.key))
			if st, err := release(); err != nil || st != 2 {
				t.Fatalf("repeated read release: %d, %v; want 2, as the first attempt answered", st, err)
			}
			log.quiet(t, 300*time.Millisecond)
		})
	}
}

// readReleasedBringingExpiryForward lets two readers, "long" and "short",
// hold rw, and releases "long"'s read hold (with a latch, as a release that
// may be made again), which brings the lock's expiry forward to short's
// lease: the release answers 2 and publishes "1". It returns the log of
// rw's channel, the release to make again, and the key of short's lease.
func readReleasedBringingExpiryForward(t *testing.T, ctx context.Context, node *redistest.Node, c *Client, rw *RWMutex) (log *channelLog, release func() (int64, error), shortLease string) {
	t.Helper()
	const long, short = "66666666-0000-8000-8000-000000000000:long", "66666666-0000-8000-8000-000000000000:short"
	shortLease = rwTimeouts(rw.key, short) + ":1"
	doAll(t, node,
		[]string{"HSET", rw.key, "mode", "read", long, "1", short, "1"}, []string{"PEXPIRE", rw.key, "60000"},
		[]string{"SET", rwTimeouts(rw.key, long) + ":1", "1", "PX", "60000"},
		[]string{"SET", shortLease, "1", "PX", "10000"},
	)
	log = listen(t, node, rw.channel)
	latch := rw.latch + ":repeat"
	release = func() (int64, error) {
		res, err := generated.RwReadRelease(ctx, c.rc, rw.key, rw.channel, rwTimeouts(rw.key, long), rw.prefix, latch, long, "publish", 10*time.Second, 0, 0)
		return res.Status, err
	}
	if st, err := release(); err != nil || st != 2 {
		t.Fatalf("read release: %d, %v; want 2 (the owner's last read hold gone)", st, err)
	}
	if got, want := log.next(t, 2*time.Second), rw.channel+" 1"; got != want {
		t.Fatalf("read release published %q, want %q (the expiry brought forward)", got, want)
	}
	return log, release, shortLease
}
