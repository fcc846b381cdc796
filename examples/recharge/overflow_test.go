package recharge_test

import (
	"errors"
	"math"
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// A credit that would take the balance past the largest BIGINT is refused
// and rolled back on every database: the order stays unpaid and the balance
// keeps its exact integer value. (SQLite turns an overflowing integer sum
// into a floating-point number instead of failing.)
func TestCreditOverflowRefused(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			const big = math.MaxInt64/2 + 1
			if err := store.Seed(ctx, 1, 2, func(int) int64 { return big }); err != nil {
				t.Fatal(err)
			}
			for id, token := range map[int64]int64{1: 10, 2: 20} {
				if _, err := store.Claim(ctx, id, token); err != nil {
					t.Fatal(err)
				}
			}
			o1, _ := store.Order(ctx, 1)
			if err := store.Pay(ctx, o1, 10, ""); err != nil {
				t.Fatalf("first credit: %v", err)
			}
			o2, _ := store.Order(ctx, 2)
			if err := store.Pay(ctx, o2, 20, ""); err == nil {
				t.Errorf("credit past the largest balance accepted")
			} else if !errors.Is(err, recharge.ErrBalanceOverflow) {
				t.Errorf("credit past the largest balance: %v; want ErrBalanceOverflow", err)
			}
			balance, _, paid, err := store.Totals(ctx)
			if err != nil || balance != big || paid != 1 {
				t.Fatalf("after the refused credit: balance %d, %d paid, err %v; want %d, 1 paid", balance, paid, err, int64(big))
			}
			if o, _ := store.Order(ctx, 2); o.Status != recharge.StatusUnpaid {
				t.Fatalf("order 2 %+v; want unpaid", o)
			}
		})
	}
}
