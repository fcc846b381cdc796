package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A TrySetPermits or TrySetCount whose reply was lost with its connection,
// and which rueidis then made again (the script is retryable) on a new
// connection whose dial failed, ran: it fails with that dial's error, which
// reads as a call never sent, so a caller that believes it tries again, and
// reads false about the count its own call set, or sets a latch counted
// down to zero since anew (its waiters then wait for counts that never
// come). Its error tells the outcome is unknown.
func TestTrySetRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	type setter struct {
		key   string
		set   func(ctx context.Context, n int64) (bool, error)
		reset func(ctx context.Context) (bool, error)
	}
	for _, kind := range []string{"Semaphore", "PermitSemaphore", "CountDownLatch"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newUnsentRig(t)
			ctx := testCtx(t, 20*time.Second)
			var s setter
			switch kind {
			case "Semaphore":
				h := mustSem(t, r.c, "tryset-repeat-unsent")
				s = setter{h.Key(), h.TrySetPermits, h.Delete}
			case "PermitSemaphore":
				h := mustPermits(t, r.c, "tryset-repeat-unsent")
				s = setter{h.Key(), h.TrySetPermits, h.Delete}
			default:
				h := mustLatch(t, r.c, "tryset-repeat-unsent")
				s = setter{h.Key(), h.TrySetCount, h.Delete}
			}
			if ok, err := s.set(ctx, 3); err != nil || !ok { // scripts loaded
				t.Fatalf("set = %v, %v", ok, err)
			}
			if _, err := s.reset(ctx); err != nil {
				t.Fatal(err)
			}
			r.lose(t, false, func() bool { return countAt(t, r.node, s.key) == 5 }, func() error {
				_, err := s.set(boundedCtx(t, ctx), 5)
				return err
			})
		})
	}
}
