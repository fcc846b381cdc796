package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The undo of an acquisition of unknown outcome that Redis refuses (here
// NOPERM: the ACL user may no longer run scripts) while the Client is open,
// or after Close began: the permits may be lost,
// and the log says Redis refused the undo and names its error. It said the
// undo "got no answer" before the Client closed, or failed "while its
// record lived (Redis unreachable)", when Redis had answered at once.
func TestSemaphoreUndoRefusedLogged(t *testing.T) {
	t.Parallel()
	// Not Close's last attempt: whether that attempt's reply comes before
	// Close ends it is a race, and "no answer" is then the truth.
	for _, when := range []string{"Open", "Closed"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			var logs syncBuffer
			c := newTestClient(t, node.Client(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			s := mustSem(t, c, "sem")
			ctx := testCtx(t, 10*time.Second)
			if _, err := s.TrySetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if err := node.Do(t, "ACL", "SETUSER", "default", "-evalsha", "-eval").Error(); err != nil {
				t.Fatal(err)
			}
			switch when {
			case "Open":
				s.undoLater(s.latch(), 1, time.Now())
				for end := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "permits may be lost") && time.Now().Before(end); {
					time.Sleep(10 * time.Millisecond)
				}
				c.Close()
			case "Closed":
				c.Close()
				s.undoLater(s.latch(), 1, time.Now())
			}
			out := logs.String()
			if !strings.Contains(out, "permits may be lost") {
				t.Fatalf("no warning that the permits may be lost:\n%s", out)
			}
			if strings.Contains(out, "no answer") || strings.Contains(out, "unreachable") || !strings.Contains(out, "refused") || !strings.Contains(out, "NOPERM") {
				t.Fatalf("the log does not say Redis refused the undo:\n%s", out)
			}
		})
	}
}
