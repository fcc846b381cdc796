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

// A nested read release that leaves no lease on the server deletes the lock,
// and the outer read hold is lost: a WARN "lock lost" names it, as for any
// other loss. Unlock answered nil and the outer hold's context ended with
// ErrLockLost while the log said nothing.
func TestLostByReleaseLeavingNoLeaseIsLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	logs := &logSink{}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-nolease-log")
	r1, err := rw.RLockWithLease(ctx, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLockWithLease(r1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // r1's lease key has expired
	if err := rw.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(r1), ErrLockLost) {
		t.Skipf("the outer hold was not lost (cause %v): nothing to log", context.Cause(r1))
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "WARN lock lost") && strings.Contains(l, "lock=rw-nolease-log ") && strings.Contains(l, "reason=") {
			return
		}
	}
	t.Errorf("no WARN \"lock lost\" naming the lock and its reason; logged: %q", logs.logs)
}
