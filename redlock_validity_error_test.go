package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// An attempt that a majority granted too late (its validity ran out) fails
// with a *QuorumError that says so. Its message ended in ": <nil>", the
// nodes' errors it has none of, as though a failure were missing.
func TestRedLockValidityRanOutSaysSo(t *testing.T) {
	t.Parallel()
	nodes, cs, pxs := proxiedNodes(t, 3, WithFailoverGuard(false, 0))
	ctx := testCtx(t, 20*time.Second)
	// Validity: 1s − elapsed − (500ms + 2ms); each node may take 900ms.
	r := mustRedLock(t, "job", cs, WithLease(time.Second), WithClockDrift(0.5, 2*time.Millisecond), WithNodeTimeout(900*time.Millisecond))
	// Connections up first: the frozen replies are the scripts'.
	lctx, err := r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	for _, px := range pxs {
		px.FreezeReplies()
	}
	time.AfterFunc(600*time.Millisecond, func() {
		for _, px := range pxs {
			px.Thaw()
		}
	})
	_, err = r.TryLock(ctx, 0)
	var qe *QuorumError
	if !errors.As(err, &qe) {
		t.Fatalf("TryLock answered late: %v, want a *QuorumError", err)
	}
	t.Logf("error: %v", err)
	if strings.Contains(err.Error(), "<nil>") {
		t.Errorf("error %q ends in <nil>", err)
	}
	if qe.Validity > 0 || !strings.Contains(err.Error(), "validity ran out") {
		t.Errorf("error %q, validity %s: want the validity named as run out", err, qe.Validity)
	}
	// The late grants were given back.
	for i, h := range heldOn(t, r, nodes, 0, 1, 2) {
		if h {
			t.Errorf("node %d still holds the lock the late attempt was granted", i)
		}
	}
}
