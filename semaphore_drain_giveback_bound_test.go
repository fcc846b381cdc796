package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A DrainPermits whose context has no deadline ends within half a record's
// life (30 s; recordTTL/2), its wait for the give-backs it drains after
// included, as every recorded call does: with the server frozen, it waited
// out the give-back (the record's whole life) and then that much again for
// its own drain.
func TestSemaphoreDrainGiveBackWaitBounded(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	p.c.recordTTL = 2 * time.Second
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "drain-bound")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.AvailablePermits(ctx); err != nil {
		t.Fatal(err)
	}
	// A drain of unknown outcome (the server froze once its record was
	// reserved, and the caller gave up 200 ms later): its give-back tries
	// until its record's life has passed. The 200 ms count from the freeze,
	// not from the call: a reservation slower than that on a loaded machine
	// left the server unfrozen, and the drain made again succeeded.
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var frozen atomic.Bool
	p.c.testReserved = func() {
		p.px.Freeze()
		frozen.Store(true)
		time.AfterFunc(200*time.Millisecond, cancel)
	}
	defer p.px.Thaw()
	_, err := s.DrainPermits(dctx)
	cancel()
	p.c.testReserved = nil
	if !frozen.Load() {
		t.Fatalf("DrainPermits never reserved its record: %v", err)
	}
	if err == nil {
		t.Fatal("DrainPermits on a frozen server: no error")
	}
	start := time.Now()
	_, err = s.DrainPermits(context.Background())
	took := time.Since(start)
	if err == nil {
		t.Error("DrainPermits made again on a frozen server: no error")
	}
	// 1.5 s of margin for a loaded machine: without the bound the call
	// took 5 s here.
	if bound := p.c.recordTTL/2 + 1500*time.Millisecond; took > bound {
		t.Errorf("DrainPermits without a deadline on a frozen server took %v, want at most %v (half a record's life): %v", took.Round(time.Millisecond), bound, err)
	}
}
