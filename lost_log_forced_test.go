package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A hold that the same Client's ForceUnlock ends is lost like any other:
// a WARN "lock lost" names it and says why, as for a loss the watchdog finds.
// Its owner (another goroutine, another part of the program) learnt of it
// from its context alone.
func TestLostByOwnForceUnlockIsLogged(t *testing.T) {
	t.Parallel()
	_, c, logs := newLoggedClient(t)
	ctx := testCtx(t, 20*time.Second)
	for _, name := range []string{"forced", "forced-lean"} {
		var l Locker = mustMutex(t, c, name)
		force := l.(*Mutex).ForceUnlock
		if name == "forced-lean" {
			lm := mustLean(t, c, name)
			l, force = lm, lm.ForceUnlock
		}
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := force(ctx); err != nil || !ok {
			t.Fatalf("%s: ForceUnlock = %v, %v", name, ok, err)
		}
		if !errors.Is(context.Cause(lctx), ErrLockLost) {
			t.Fatalf("%s: lock context cause %v, want ErrLockLost", name, context.Cause(lctx))
		}
		if lost, logged := logs.lostLines("lock="+name+" ", "force-unlocked"); len(lost) == 0 {
			t.Errorf("%s: no WARN \"lock lost\" naming the lock and the force-unlock; logged: %q", name, logged)
		}
	}
}
