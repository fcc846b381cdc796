package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock hands out no fencing token: its context answers none, also when
// it was locked inside the context of a lock that does, whose token says
// nothing of the RedLock's holders.
func TestRedLockContextHasNoFence(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	outer := mustMutex(t, cs[0], "job-guard")
	octx, err := outer.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Unlock(octx)
	if _, ok := Fence(octx); !ok {
		t.Fatal("the enclosing Mutex hands out no token")
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	if tok, ok := Fence(lctx); ok {
		t.Errorf("Fence(RedLock context) = %d, true; want none (the enclosing lock's token)", tok)
	}
	if _, ok := FenceOf(lctx, "job-guard"); !ok {
		t.Error("FenceOf(RedLock context, the enclosing lock's name): none; the enclosing lock's token stays readable by its name")
	}
}
