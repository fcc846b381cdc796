package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowReplyExtender is a lock whose Extend, once the server has run it, is
// slow to hand its reply back: the call after it reaches the server later
// but is answered first.
type slowReplyExtender struct {
	primitive
	ext     extender
	entered chan struct{}
	gate    chan struct{}
}

func (g *slowReplyExtender) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	ok, acked, err := g.ext.extendOnce(ctx, field, lease, token, guard)
	close(g.entered)
	<-g.gate
	return ok, acked, err
}

// Two Extends of one hold overlap: the longer lease runs on the server
// first, then the shorter one, whose reply is handled first. The lease in
// force is the shorter one, so the lock context must end with it, whatever
// order the replies are handled in.
func TestExtendOverlappingShorterWins(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	type kind struct {
		name  string
		p     primitive
		lock  func(ctx context.Context, lease time.Duration) (context.Context, error)
		other Locker
	}
	m, om := mustMutex(t, c, "overlap-mutex"), mustMutex(t, o, "overlap-mutex")
	l, ol := mustLean(t, c, "overlap-lean"), mustLean(t, o, "overlap-lean")
	f, of := mustFair(t, c, "overlap-fair"), mustFair(t, o, "overlap-fair")
	rw, orw := mustRW(t, c, "overlap-rw"), mustRW(t, o, "overlap-rw")
	for _, k := range []kind{
		{"Mutex", m, m.LockWithLease, om},
		{"LeanMutex", l, l.LockWithLease, ol},
		{"FairMutex", f, f.LockWithLease, of},
		{"RWMutexWrite", &rw.write, rw.LockWithLease, orw},
	} {
		t.Run(k.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			const long, short = 20 * time.Second, 400 * time.Millisecond
			lctx, err := k.lock(ctx, long)
			if err != nil {
				t.Fatal(err)
			}
			g := &slowReplyExtender{primitive: k.p, ext: k.p.(extender), entered: make(chan struct{}), gate: make(chan struct{})}
			first := make(chan error, 1)
			go func() { first <- c.extend(ctx, lctx, g, long) }()
			<-g.entered // the long lease is in force on the server
			if err := c.extend(ctx, lctx, k.p, short); err != nil {
				t.Fatal(err)
			}
			close(g.gate)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			time.Sleep(short + 200*time.Millisecond)
			octx, err := k.other.TryLock(testCtx(t, 5*time.Second), 0)
			alive := lctx.Err() == nil
			if err != nil {
				t.Fatalf("the shorter lease in force did not end the lock: %v", err)
			}
			defer k.other.Unlock(octx)
			if alive {
				t.Fatal("another owner holds the lock while the extending owner's lock context is alive (the longer Extend's reply, handled last, moved its end past the shorter lease in force)")
			}
		})
	}
}

// A re-entry with a long lease runs on the server, then an Extend to a
// shorter lease, handled before the re-entry's reply: the shorter lease is
// in force, and the re-entry's reply must not move the end of the owner's
// lock context past it.
func TestExtendDuringReentryShorterWins(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	m, om := mustMutex(t, c, "overlap-reentry"), mustMutex(t, o, "overlap-reentry")
	ctx := testCtx(t, 30*time.Second)
	const long, short = 20 * time.Second, 400 * time.Millisecond
	outer, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	var eerr error
	c.setGrantHook(func() { eerr = m.Extend(ctx, outer, short) })
	_, err = m.LockWithLease(outer, long)
	c.setGrantHook(nil)
	if err != nil || eerr != nil {
		t.Fatalf("re-entry: %v; Extend: %v", err, eerr)
	}
	time.Sleep(short + 200*time.Millisecond)
	octx, err := om.TryLock(testCtx(t, 5*time.Second), 0)
	alive := outer.Err() == nil
	if err != nil {
		t.Fatalf("the shorter lease in force did not end the lock: %v", err)
	}
	defer om.Unlock(octx)
	if alive {
		t.Fatal("another owner holds the lock while the re-entering owner's lock context is alive (the re-entry's reply, handled after the Extend's, moved its end past the shorter lease in force)")
	}
}
