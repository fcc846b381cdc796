package scriptlock

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goexitAcquireEnd is an Observer whose AcquireEnd ends its goroutine after
// a grant, as a test's t.FailNow there does.
type goexitAcquireEnd struct{ NopObserver }

func (goexitAcquireEnd) AcquireEnd(_ context.Context, _ Op, e AcquireEvent) {
	if e.Err == nil {
		runtime.Goexit()
	}
}

// TestObserverAcquireEndGoexitGivesBack: an Observer's AcquireEnd that ends
// the goroutine of a Lock after a grant has the grant given back first, as
// one that panics does: the caller never receives the hold, which stayed
// held (and renewed) by nobody.
func TestObserverAcquireEndGoexitGivesBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithObserver(goexitAcquireEnd{}), WithWatchdog(2*time.Second, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "acquireend-goexit")
	if how := howEnded(func() { _, _ = m.Lock(ctx) }); how != endedGoexit {
		t.Fatalf("Lock whose AcquireEnd ended its goroutine %s; want its Goexit to go on", how)
	}
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Fatalf("lock after a Lock whose AcquireEnd ended its goroutine: %+v, %v; want given back", st, err)
	}
}
