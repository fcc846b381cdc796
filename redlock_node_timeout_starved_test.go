package scriptlock

import (
	"context"
	"testing"
	"time"
)

// starvedTimer is ctx as seen while the timer that ends it at its deadline
// has not run yet (a loaded machine, the race detector): its deadline has
// passed, and Done and Err say so only once late is closed.
type starvedTimer struct {
	context.Context
	late chan struct{}
}

func (s starvedTimer) Done() <-chan struct{} { return s.late }

func (s starvedTimer) Err() error {
	select {
	case <-s.late:
		return s.Context.Err()
	default:
		return nil
	}
}

// A RedLock node's call that saw its node timeout pass before the timer that
// ends its context ran is cut off by the node timeout (observed as
// unanswered), however late that timer runs: a timer starved for more than a
// few milliseconds on a loaded machine classed it as the caller's deadline
// (observed as timed out, a deadline the caller never set). A deadline of
// the caller's that comes before the node timeout is still the caller's.
func TestNodeTimeoutCutWithTimerLate(t *testing.T) {
	t.Parallel()
	end := time.Now().Add(20 * time.Millisecond)
	nctx, cancel := nodeCallContext(context.Background(), end)
	defer cancel()
	late := make(chan struct{})
	defer close(late)
	ctx := starvedTimer{nctx, late}
	time.Sleep(time.Until(end) + 5*time.Millisecond)
	start := time.Now()
	if !cutByOuterWait(ctx, context.DeadlineExceeded) {
		t.Errorf("a node's call past its node timeout, the timer ending its context not run yet: not cut by the node timeout (classed after %s)", time.Since(start))
	}

	callerEnd := time.Now().Add(20 * time.Millisecond)
	caller, cancelCaller := context.WithDeadline(context.Background(), callerEnd)
	defer cancelCaller()
	nctx, cancel = nodeCallContext(caller, callerEnd.Add(time.Second))
	defer cancel()
	time.Sleep(time.Until(callerEnd) + 5*time.Millisecond)
	if cutByOuterWait(starvedTimer{nctx, late}, context.DeadlineExceeded) {
		t.Error("a node's call past its caller's deadline, before the node timeout: cut by the node timeout, want the caller's deadline")
	}
}
