package scriptlockotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panicAfterAcquire forwards every event to the OpenTelemetry Observer and
// then, while armed, panics in AcquireEnd: a composite Observer whose
// second part fails after the first has counted the acquisition.
type panicAfterAcquire struct {
	*telemetry
	armed atomic.Bool
}

func (p *panicAfterAcquire) AcquireStart(ctx context.Context, op scriptlock.Op) context.Context {
	return p.obs.AcquireStart(ctx, op)
}
func (p *panicAfterAcquire) AcquireEnd(ctx context.Context, op scriptlock.Op, e scriptlock.AcquireEvent) {
	p.obs.AcquireEnd(ctx, op, e)
	if p.armed.Load() {
		panic("observer failed")
	}
}
func (p *panicAfterAcquire) ReleaseStart(ctx context.Context, op scriptlock.Op) context.Context {
	return p.obs.ReleaseStart(ctx, op)
}
func (p *panicAfterAcquire) ReleaseEnd(ctx context.Context, op scriptlock.Op, e scriptlock.ReleaseEvent) {
	p.obs.ReleaseEnd(ctx, op, e)
}
func (p *panicAfterAcquire) HoldEnd(ctx context.Context, op scriptlock.Op, e scriptlock.HoldEvent) {
	p.obs.HoldEnd(ctx, op, e)
}
func (p *panicAfterAcquire) Renewal(e scriptlock.RenewalEvent) { p.obs.Renewal(e) }
func (p *panicAfterAcquire) Guard(e scriptlock.GuardEvent)     { p.obs.Guard(e) }

// A grant whose AcquireEnd panicked was reported acquired and is given back:
// its hold's end is reported too, so scriptlock.lock.held returns to 0.
func TestHeldAfterAcquireEndPanic(t *testing.T) {
	node := redistest.Server(t)
	obs := &panicAfterAcquire{telemetry: newTelemetry(t)}
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := mustMutex(t, c, "panicky")
	obs.armed.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Lock did not panic with the Observer")
			}
		}()
		_, _ = m.Lock(ctx)
	}()
	obs.armed.Store(false)
	if st, err := m.State(ctx); err != nil || st.Locked {
		t.Fatalf("lock after the panicking AcquireEnd: %+v, %v; want it given back", st, err)
	}
	held := sums(t, obs.collect(t)["scriptlock.lock.held"])
	if held["scriptlock.primitive=mutex"] != 0 {
		t.Errorf("scriptlock.lock.held = %v after the grant was given back; want 0", held)
	}
	if _, ok := histCounts(t, obs.collect(t)["scriptlock.lock.hold.duration"])["scriptlock.hold.end_cause=unlocked,scriptlock.primitive=mutex"]; !ok {
		t.Error("no hold duration recorded for the given-back grant")
	}
}
