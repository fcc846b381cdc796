package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A client wrapper whose every renewal panics is logged at ERROR (with
// its stack) once, and at DEBUG at each renewal after that, as long as it
// panics: the watchdog makes a failed renewal again soon, and at every
// round of every hold, which filled the log with ERRORs. Once a round's
// renewals go through again, the next panic is logged at ERROR again.
func TestWatchdogRenewalPanicLoggedOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var logs syncBuffer
	rc := newPanickyClient(node.Client(t), scriptNaming("wd-panic-log", "Do", "DoMulti"))
	c := newTestClient(t, rc, WithWatchdog(3*time.Second, 300*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "wd-panic-log")
	errors := func() int {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "panic recovered") {
				n++
			}
		}
		return n
	}
	for round := 1; round <= 2; round++ {
		h, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // renewed twice: no panic
		rc.left.Store(-1)
		time.Sleep(1500 * time.Millisecond) // a few renewals, all panicking
		rc.left.Store(0)
		if n := errors(); n != round {
			t.Fatalf("after %d spells of panicking renewals, %d panics logged at ERROR, want %d; log:\n%s", round, n, round, logs.String())
		}
		if err := context.Cause(h); err != nil {
			t.Fatalf("the hold ended before its loss deadline: %v", err)
		}
		time.Sleep(700 * time.Millisecond) // renewed again
		if err := m.Unlock(h); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(logs.String(), "panic recovered again") {
		t.Fatalf("the later panics were not logged at DEBUG; log:\n%s", logs.String())
	}
}
