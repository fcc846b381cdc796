package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A watchdog renewal round meets a client wrapper that panics on one
// hold's renewal: the panic is logged, not let through (it crashed the
// process from the round's goroutine), the other holds of the round, sent
// in one pipeline with it, are still renewed, and the panicking hold is
// treated as a renewal that failed: made again soon (a wrapper that
// panicked once keeps the hold), its loss deadline ending it should no
// renewal get through (one that always panics).
func TestWatchdogRenewalPanic(t *testing.T) {
	for _, always := range []bool{false, true} {
		name := "once"
		if always {
			name = "always"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			var logs syncBuffer
			rc := newPanickyClient(node.Client(t), scriptNaming("wd-panic-a", "Do", "DoMulti"))
			c := newTestClient(t, rc, WithWatchdog(time.Second, 300*time.Millisecond),
				WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			ctx := testCtx(t, 20*time.Second)
			a, b := mustMutex(t, c, "wd-panic-a"), mustMutex(t, c, "wd-panic-b")
			ha, err := a.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if always {
				rc.left.Store(-1)
			} else {
				rc.left.Store(1)
			}
			time.Sleep(2500 * time.Millisecond) // past the 1 s lease: renewals carry b on
			if !strings.Contains(logs.String(), "panic recovered") {
				t.Fatalf("the renewal's panic was not logged; log:\n%s", logs.String())
			}
			if err := context.Cause(hb); err != nil {
				t.Fatalf("the hold renewed beside the panicking one ended: %v", err)
			}
			if err := context.Cause(ha); always != (err != nil) {
				t.Fatalf("the hold whose renewal panicked (always %v): %v", always, err)
			} else if always && !errors.Is(err, ErrLockLost) {
				t.Fatalf("the hold whose renewal always panics ended with %v, want ErrLockLost", err)
			}
			rc.left.Store(0)
			if err := b.Unlock(hb); err != nil {
				t.Fatal(err)
			}
			if !always {
				if err := a.Unlock(ha); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
