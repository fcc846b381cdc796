package recharge_test

import (
	"errors"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
)

// Only an unpaid order is paid. A holder that claims a paid order with a
// newer token and calls Pay anyway (the store used without Recharge's check)
// is refused, and an order in any other state (cancelled, refunded: states
// another part of the shop sets) is neither credited nor marked paid.
func TestOnlyUnpaidOrdersPaid(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			o, err := store.Claim(ctx, 1, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Pay(ctx, o, 5, ""); err != nil {
				t.Fatal(err)
			}
			again, err := store.Claim(ctx, 1, 6)
			if err != nil || again.Status != recharge.StatusPaid {
				t.Fatalf("claim of the paid order: %+v %v", again, err)
			}
			if err := store.Pay(ctx, again, 6, ""); !errors.Is(err, recharge.ErrNotPayable) {
				t.Errorf("second payment of a paid order: %v; want ErrNotPayable", err)
			}
			if bal, _, paid, _ := store.Totals(ctx); bal != amount || paid != 1 {
				t.Fatalf("after paying a paid order again: balance %d, %d paid; want %d, 1", bal, paid, amount)
			}
		})
	}
}

func TestOtherStatesNotCredited(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b, 2, nil, nil, false)
			if _, err := e.store.DB().ExecContext(t.Context(), `UPDATE orders SET status = 'cancelled'`); err != nil {
				t.Fatal(err)
			}
			if a := e.post(t, "1", ""); a.code != http.StatusConflict {
				t.Errorf("HTTP, cancelled order: %d %s; want 409", a.code, a.body)
			}
			if _, err := e.grpc.Recharge(t.Context(), &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.FailedPrecondition {
				t.Errorf("gRPC, cancelled order: %v; want FailedPrecondition", err)
			}
			if bal, _, paid, _ := e.store.Totals(t.Context()); bal != 0 || paid != 0 {
				t.Fatalf("cancelled orders: balance %d, %d paid; want nothing credited", bal, paid)
			}
			for _, id := range []int64{1, 2} {
				if o, _ := e.store.Order(t.Context(), id); o.Status != "cancelled" {
					t.Errorf("order %d is %q; want still cancelled", id, o.Status)
				}
			}
		})
	}
}
