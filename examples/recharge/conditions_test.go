package recharge_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// TestStoreConditionsCreditOnceWithoutLock: docs/demo.md says the lock keeps
// duplicates from repeating the work, and the database's conditions (the
// claim with the token, fence = token AND status = 'unpaid' on the write)
// keep an order to one credit. Ten concurrent duplicates with no lock at
// all, each making the locked flow's store calls with a token of its own
// (from a counter here), credit the order once; more than one may do the
// work, which is what the lock saves.
func TestStoreConditionsCreditOnceWithoutLock(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			var (
				tokens, worked, credited atomic.Int64
				wg                       sync.WaitGroup
				gate                     = make(chan struct{})
			)
			for range 10 {
				wg.Go(func() {
					<-gate
					token := tokens.Add(1)
					o, err := store.Claim(ctx, 1, token)
					if err != nil || o.Status != recharge.StatusUnpaid {
						return
					}
					worked.Add(1)
					time.Sleep(10 * time.Millisecond) // the work
					if store.Pay(ctx, o, token, "") == nil {
						credited.Add(1)
					}
				})
			}
			close(gate)
			wg.Wait()
			bal, _, _, err := store.Totals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("no lock: the work ran %d time(s), %d credit(s), balance %d (order amount %d)", worked.Load(), credited.Load(), bal, amount)
			if credited.Load() != 1 || bal != amount {
				t.Errorf("without a lock the store's conditions credited the order %d time(s), balance %d; want once, %d", credited.Load(), bal, amount)
			}
		})
	}
}
