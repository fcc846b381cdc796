package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A failed attempt's give-back that goes on in the background (Lock's
// context cancelled while a member's server stopped answering) is waited
// for by Close of the Client of the member it waits on: it was owned by
// the first member's Client alone, so Close of that member's Client
// returned while the give-back went on through it, the member still held.
func TestMultiLockGiveBackWaitedForByMembersClient(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	px := netproxy.New(t, nodes[1].Addr)
	c0 := newTestClient(t, nodes[0].Client(t))
	c1 := newTestClient(t, px.Client(t))
	ctx := testCtx(t, 30*time.Second)
	a, b, z := mustMutex(t, c0, "ow-a"), mustMutex(t, c1, "ow-b"), mustMutex(t, c0, "ow-z")
	warm(t, a)
	warm(t, b)
	hctx, err := mustMutex(t, c0, "ow-z").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = z.Unlock(hctx) }()
	var once sync.Once
	frozen := beforeLock{z, func() { once.Do(px.Freeze) }}
	defer px.Thaw()
	// b's server stops answering once b is taken; z's member wait runs out
	// after 200 ms, and the give-back of b then hangs.
	ml := mustMulti(t, []Locker{a, b, frozen}, WithMemberWait(200*time.Millisecond))
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(600*time.Millisecond, cancel)
	if _, err := ml.Lock(lctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	time.AfterFunc(300*time.Millisecond, px.Thaw)
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := nodes[1].Do(t, "EXISTS", b.Key()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("member b held (%d, %v) once its Client's Close returned: the give-back through it went on past Close", n, err)
	}
}

// beforeLock runs f before each TryLock of its Locker.
type beforeLock struct {
	Locker
	f func()
}

func (b beforeLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	b.f()
	return b.Locker.TryLock(ctx, wait)
}
