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

// A nested read release sent once the outer hold's lease is known to be over
// ends the outer hold as lost before the script runs, which then deletes the
// lock: one loss, logged once, not again when the release's reply comes.
func TestLostByReleaseLeavingNoLeaseIsLoggedOnce(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	logs := &logSink{}
	c := newTestClient(t, node.Client(t), WithLogger(slog.New(logs)))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "rw-nolease-log-once")
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
	time.Sleep(100 * time.Millisecond)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	var lost []string
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "WARN lock lost") && strings.Contains(l, "lock=rw-nolease-log-once ") {
			lost = append(lost, l)
		}
	}
	if len(lost) != 1 {
		t.Errorf("%d WARN \"lock lost\" lines for one lost hold; want 1: %q", len(lost), lost)
	}
}
