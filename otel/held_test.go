package scriptlockotel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// heldProbe reads scriptlock.lock.held right after every hold end, as a
// periodic reader may at any moment.
type heldProbe struct {
	*telemetry
	t      *testing.T
	mu     sync.Mutex
	lowest int64
	order  []string
}

func (p *heldProbe) AcquireStart(ctx context.Context, op scriptlock.Op) context.Context {
	return p.obs.AcquireStart(ctx, op)
}
func (p *heldProbe) AcquireEnd(ctx context.Context, op scriptlock.Op, e scriptlock.AcquireEvent) {
	p.obs.AcquireEnd(ctx, op, e)
	p.mu.Lock()
	p.order = append(p.order, "acquire:"+e.Outcome.String())
	p.mu.Unlock()
}
func (p *heldProbe) ReleaseStart(ctx context.Context, op scriptlock.Op) context.Context {
	return p.obs.ReleaseStart(ctx, op)
}
func (p *heldProbe) ReleaseEnd(ctx context.Context, op scriptlock.Op, e scriptlock.ReleaseEvent) {
	p.obs.ReleaseEnd(ctx, op, e)
}
func (p *heldProbe) HoldEnd(ctx context.Context, op scriptlock.Op, e scriptlock.HoldEvent) {
	p.obs.HoldEnd(ctx, op, e)
	var rm metricdata.ResourceMetrics
	if err := p.reader.Collect(context.Background(), &rm); err != nil {
		p.t.Error(err)
		return
	}
	var held int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "scriptlock.lock.held" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					held += dp.Value
				}
			}
		}
	}
	p.mu.Lock()
	p.lowest = min(p.lowest, held)
	p.order = append(p.order, "hold_end:"+e.Cause.String())
	p.mu.Unlock()
}
func (p *heldProbe) Renewal(e scriptlock.RenewalEvent) { p.obs.Renewal(e) }
func (p *heldProbe) Guard(e scriptlock.GuardEvent)     { p.obs.Guard(e) }

// A hold whose lease ends as it is granted is reported acquired before it is
// reported ended: the held gauge never reads below zero.
func TestHeldNeverNegative(t *testing.T) {
	node := redistest.Server(t)
	probe := &heldProbe{telemetry: newTelemetry(t), t: t}
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(probe))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := mustMutex(t, c, "short")
	for range 200 {
		_, _ = m.LockWithLease(ctx, 5200*time.Microsecond) // just past the drift allowance: ends as it is granted
		time.Sleep(3 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	probe.mu.Lock()
	defer probe.mu.Unlock()
	final := sums(t, probe.collect(t)["scriptlock.lock.held"])
	if probe.lowest < 0 || final["scriptlock.primitive=mutex"] != 0 {
		t.Errorf("scriptlock.lock.held read %d after a hold end, %v at the end; events: %v", probe.lowest, final, probe.order)
	}
}
