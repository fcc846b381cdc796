package scriptlock

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock handle keeps nothing of the holds it lost: one used for many
// owners whose holds are lost and never unlocked does not grow.
func TestMultiLockLostHoldsNotKept(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t), sharedPrefix(t))
	ctx := testCtx(t, 20*time.Second)
	shared := otherPkgLocker{mustMutex(t, c, "lost-not-kept")}
	other := mustMutex(t, c, "lost-not-kept-other")
	ml := mustMulti(t, []Locker{shared, other})
	const n = 20
	ptrs := make([]weak.Pointer[multiHeld], 0, n)
	for i := range n {
		mctx, err := ml.Lock(WithOwner(ctx, "owner-"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		mh := mctx.Value(ml.key).(*multiHeld)
		ptrs = append(ptrs, weak.Make(mh))
		if _, err := other.ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-mh.givenBack:
		case <-time.After(5 * time.Second):
			t.Fatal("the lost MultiLock did not give its members back within 5s")
		}
	}
	// The handle stays in use: what it keeps stays with it.
	defer runtime.KeepAlive(ml)
	kept := 0
	for range 50 {
		runtime.GC()
		kept = 0
		for _, p := range ptrs {
			if p.Value() != nil {
				kept++
			}
		}
		if kept == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d of %d lost holds, never unlocked, still kept in memory through the MultiLock", kept, n)
}
