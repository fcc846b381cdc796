package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A renewal panic of another kind than the one logged at ERROR, while
// renewals still panic, is news: logged at ERROR too, with its stack, not
// at DEBUG as a repeat of the first.
func TestWatchdogRenewalPanicNewKindLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var logs syncBuffer
	rc := newPanickyClient(node.Client(t), scriptsThrough("Do", "DoMulti"))
	c := newTestClient(t, rc, WithWatchdog(6*time.Second, 300*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "wd-panic-news")
	h, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errorWith := func(s string) bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "panic recovered") && strings.Contains(line, s) {
				return true
			}
		}
		return false
	}
	first, second := "wrapper fault one", "wrapper fault two"
	rc.value.Store(&first)
	rc.left.Store(-1)
	if !eventually(5*time.Second, func() bool { return errorWith(first) }) {
		t.Fatalf("the first renewal panic was not logged at ERROR; log:\n%s", logs.String())
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered again") }) {
		t.Fatalf("the first panic's repeats were not logged at DEBUG; log:\n%s", logs.String())
	}
	rc.value.Store(&second)
	if !eventually(3*time.Second, func() bool { return errorWith(second) }) {
		rc.left.Store(0)
		t.Fatalf("a renewal panic of another kind was not logged at ERROR; log:\n%s", logs.String())
	}
	rc.left.Store(0)
	if err := m.Unlock(h); err != nil {
		t.Fatal(err)
	}
}
