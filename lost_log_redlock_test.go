package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A RedLock whose quorum stops confirming renewals within its validity (a
// drift allowance wider than a node hold's loss margin) is lost: a WARN
// "lock lost" names it. Its context ended with ErrLockLost and its nodes
// were given back (their holds end as unlocked), while the log said
// nothing: no node's own hold was found lost.
func TestRedLockValidityLossIsLogged(t *testing.T) {
	t.Parallel()
	logs := &logSink{}
	_, cs, pxs := proxiedNodes(t, 3, WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	const lease = 2 * time.Second
	r := mustRedLock(t, "job-logged", cs, WithWatchdog(lease, 600*time.Millisecond),
		WithClockDrift(0.4, 0), WithNodeTimeout(300*time.Millisecond))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	pxs[1].Freeze()
	pxs[2].Freeze()
	defer pxs[1].Thaw()
	defer pxs[2].Thaw()
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lock context alive 5s after two of three nodes stopped answering")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	// Logged just after the context ends.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		logs.mu.Lock()
		for _, l := range logs.logs {
			if strings.HasPrefix(l, "WARN lock lost") && strings.Contains(l, "job-logged") {
				logs.mu.Unlock()
				return
			}
		}
		if time.Now().After(deadline) {
			defer logs.mu.Unlock()
			break
		}
		logs.mu.Unlock()
	}
	t.Errorf("no WARN \"lock lost\" naming the RedLock (cause %v); logged: %q", context.Cause(lctx), logs.logs)
}
