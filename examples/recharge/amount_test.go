package recharge_test

import (
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// Pay credits the order's own account with the order's own amount, as the
// database has them, not what the caller's copy of the order says: a copy
// with another amount or account (read before a change, or built from a
// request) is refused and nothing is written.
func TestPayCreditsTheOrdersAmount(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 2, 1, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			o, err := store.Claim(ctx, 1, 5)
			if err != nil || o.AccountID != 1 {
				t.Fatalf("claim: %+v %v", o, err)
			}
			for _, forged := range []recharge.Order{
				{ID: 1, AccountID: 1, Amount: 50 * amount},
				{ID: 1, AccountID: 2, Amount: amount},
			} {
				if err := store.Pay(ctx, forged, 5, ""); err == nil {
					t.Errorf("Pay of %+v accepted; order 1 is %d to account 1", forged, amount)
				}
			}
			bal, _, paid, _ := store.Totals(ctx)
			if bal > amount || (bal == amount) != (paid == 1) {
				t.Fatalf("balance %d, %d paid; want at most the order's amount %d, credited once", bal, paid, amount)
			}
			if paid == 0 {
				if err := store.Pay(ctx, o, 5, ""); err != nil {
					t.Fatal(err)
				}
			}
			var b2 int64
			if err := store.DB().QueryRowContext(ctx, `SELECT balance FROM accounts WHERE id = 2`).Scan(&b2); err != nil || b2 != 0 {
				t.Fatalf("account 2 balance %d (%v); want 0", b2, err)
			}
			if bal, _, paid, _ := store.Totals(ctx); bal != amount || paid != 1 {
				t.Fatalf("balance %d, %d paid; want %d, 1", bal, paid, amount)
			}
		})
	}
}
