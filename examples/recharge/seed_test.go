package recharge_test

import (
	"errors"
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// Seed refuses counts it cannot honour with ErrInvalidSeed and writes
// nothing: orders with no account to belong to (it divided by zero and
// panicked), or a negative count.
func TestSeedInvalidCounts(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			store := b.open(t)
			for _, c := range []struct{ accounts, orders int }{{0, 3}, {-2, 3}, {2, -1}} {
				err := store.Seed(t.Context(), c.accounts, c.orders, func(int) int64 { return amount })
				if !errors.Is(err, recharge.ErrInvalidSeed) {
					t.Errorf("Seed(%d accounts, %d orders): %v; want ErrInvalidSeed", c.accounts, c.orders, err)
				}
			}
			var n int
			if err := store.DB().QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM accounts) + (SELECT COUNT(*) FROM orders)`).Scan(&n); err != nil || n != 0 {
				t.Fatalf("%d rows written, %v; want none", n, err)
			}
		})
	}
}
