package scriptlock

import (
	"context"
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
	// reserved): its give-back tries until its record's life has passed.
	p.c.testReserved = p.px.Freeze
	defer p.px.Thaw()
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := s.DrainPermits(dctx)
	cancel()
	p.c.testReserved = nil
	if err == nil {
		t.Fatal("DrainPermits on a frozen server: no error")
	}
	start := time.Now()
	_, err = s.DrainPermits(context.Background())
	took := time.Since(start)
	if err == nil {
		t.Error("DrainPermits made again on a frozen server: no error")
	}
	if bound := p.c.recordTTL/2 + 500*time.Millisecond; took > bound {
		t.Errorf("DrainPermits without a deadline on a frozen server took %v, want at most %v (half a record's life): %v", took.Round(time.Millisecond), bound, err)
	}
}
