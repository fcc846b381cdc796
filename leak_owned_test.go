package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock or RedLock hold that is lost, or whose Client is closed, and
// is never unlocked, leaves no entry in the process-wide registries of such
// holds.
func TestLostMultiHoldsLeaveNoEntry(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	c := newTestClient(t, nodes[0].Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	entries := func() (int, int) {
		multiOwned.mu.Lock()
		m := len(multiOwned.m) + len(multiOwned.unlocking)
		multiOwned.mu.Unlock()
		redOwned.mu.Lock()
		r := len(redOwned.m) + len(redOwned.unlocking)
		redOwned.mu.Unlock()
		return m, r
	}
	// Lost: a member force-unlocked, never unlocked.
	a := mustMutex(t, c, "la")
	ml := mustMulti(t, []Locker{a, mustMutex(t, c, "lb")})
	mctx, err := ml.Lock(WithOwner(ctx, "o"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-mctx.Done()
	// A RedLock whose Clients close under it.
	reds := []*Client{newTestClient(t, nodes[0].Client(t), prefix), newTestClient(t, nodes[1].Client(t), prefix), newTestClient(t, nodes[2].Client(t), prefix)}
	rl := mustRedLock(t, "lr", reds)
	rctx, err := rl.Lock(WithOwner(ctx, "o"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range reds {
		rc.Close()
	}
	<-rctx.Done()
	if !eventually(3*time.Second, func() bool { m, r := entries(); return m == 0 && r == 0 }) {
		m, r := entries()
		t.Fatalf("registry entries left of holds that ended without Unlock: MultiLock %d, RedLock %d", m, r)
	}
}
