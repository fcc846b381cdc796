package scriptlock

import (
	"testing"
	"time"
)

// A nested read release sent once the outer hold's lease is known to be over
// ends the outer hold as lost before the script runs, which then deletes the
// lock: one loss, logged once, not again when the release's reply comes.
func TestLostByReleaseLeavingNoLeaseIsLoggedOnce(t *testing.T) {
	t.Parallel()
	_, c, logs := newLoggedClient(t)
	ctx := testCtx(t, 30*time.Second)
	loseOuterReadByNestedRelease(t, ctx, mustRW(t, c, "rw-nolease-log-once"))
	time.Sleep(100 * time.Millisecond)
	if lost, _ := logs.lostLines("lock=rw-nolease-log-once "); len(lost) != 1 {
		t.Errorf("%d WARN \"lock lost\" lines for one lost hold; want 1: %q", len(lost), lost)
	}
}
