package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A wait that runs out leaves its line in the background; a client
// wrapper's panic there is logged and the Client goes on (the place left
// behind expires on its own, as after a leave that failed). It crashed the
// process from that goroutine.
func TestBackgroundLeavePanicLogged(t *testing.T) {
	for _, kind := range []string{"fair", "mutex"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			var cmd rueidis.Completed
			var err error
			if kind == "fair" {
				cmd, err = generated.FairCancelCommand(node.Client(t), "k", "q", "t", "w", "o", "publish", false)
			} else {
				cmd, err = generated.MutexWaitCancelCommand(node.Client(t), "k", "w", "x", "l", "o", "publish", time.Second)
			}
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			h := newTestClient(t, node.Client(t))
			rc := newPanickyClient(node.Client(t), scriptRuns(cmd.Commands()[1]))
			rc.left.Store(-1)
			c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			ctx := testCtx(t, 20*time.Second)
			var hl, l Locker
			if kind == "fair" {
				hl, l = mustFair(t, h, "leave-panic"), mustFair(t, c, "leave-panic")
			} else {
				hl, l = mustMutex(t, h, "leave-panic"), mustMutex(t, c, "leave-panic")
			}
			held, err := hl.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.TryLock(ctx, 300*time.Millisecond); err == nil {
				t.Fatal("TryLock took a held lock")
			}
			if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
				t.Fatalf("the leave's panic was not logged; log:\n%s", logs.String())
			}
			if err := hl.Unlock(held); err != nil {
				t.Fatal(err)
			}
			got, err := l.TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatalf("TryLock after the leave's panic: %v", err)
			}
			if err := l.Unlock(got); err != nil {
				t.Fatal(err)
			}
		})
	}
}
