package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Fence on a MultiLock's context answers the token of the member taken last
// (the most recent lock acquired into it), and none when that member hands
// out none (a RedLock, an unfenced LeanMutex): never the token of an
// earlier member or of a lock enclosing the MultiLock, drawn from another
// counter, which says nothing of the last member's holders. It answered
// those, as a RedLock's own context no longer does.
func TestMultiLockFenceIsLastMember(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	outer := mustMutex(t, cs[0], "guard")
	octx, err := outer.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Unlock(octx)
	guardTok, ok := Fence(octx)
	if !ok {
		t.Fatal("the enclosing Mutex hands out no token")
	}

	// No member hands out a token.
	ml := mustMulti(t, []Locker{mustRedLock(t, "job-a", cs), mustLean(t, cs[1], "job-b")})
	lctx, err := ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := Fence(lctx); ok {
		t.Errorf("Fence(MultiLock of a RedLock and an unfenced LeanMutex) = %d, true; want none (the enclosing lock's token is %d)", tok, guardTok)
	}
	if tok, ok := FenceOf(lctx, "guard"); !ok || tok != guardTok {
		t.Errorf("FenceOf(MultiLock context, the enclosing lock's name) = %d, %v; want %d: it stays readable by its name", tok, ok, guardTok)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	// The member taken last hands out none; the one before does.
	first := mustMutex(t, cs[2], "job-c")
	ml = mustMulti(t, []Locker{first, mustRedLock(t, "job-d", cs)})
	lctx, err = ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Unlock(lctx)
	if tok, ok := Fence(lctx); ok {
		t.Errorf("Fence(MultiLock whose last member is a RedLock) = %d, true; want none", tok)
	}
	if _, ok := FenceOf(lctx, "job-c"); !ok {
		t.Error("FenceOf(MultiLock context, its Mutex member): none")
	}
	if _, ok := FenceOf(lctx, "job-d"); ok {
		t.Error("FenceOf(MultiLock context, its RedLock member): a token")
	}
}
