package recharge_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
)

// A credit refused because it would overflow the account's balance is a
// refusal by the account's state, not a server failure: 409 / FailedPrecondition
// saying so, as for an order that is not payable, not 500 / Internal, which
// tells the client the server broke. Nothing is written.
func TestCreditOverflowAnswered(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			// Orders 1, 3 and 5 are account 1's: the first credit takes its
			// balance past half the largest BIGINT, the others would overflow it.
			e := newEnv(t, b, 5, nil, nil, false)
			const big = math.MaxInt64/2 + 1
			if _, err := e.store.DB().ExecContext(ctx, fmt.Sprintf(`UPDATE orders SET amount = %d`, int64(big))); err != nil {
				t.Fatal(err)
			}
			if a := e.post(t, "1", ""); a.code != http.StatusOK || a.out.Outcome != "credited" {
				t.Fatalf("first credit: %d %s", a.code, a.body)
			}
			if a := e.post(t, "3", ""); a.code != http.StatusConflict || !strings.Contains(a.body, "overflow") {
				t.Errorf("HTTP, credit past the largest balance: %d %s; want 409 saying the balance would overflow", a.code, strings.TrimSpace(a.body))
			}
			_, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 5})
			if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "overflow") {
				t.Errorf("gRPC, credit past the largest balance: %v; want FailedPrecondition saying the balance would overflow", err)
			}
			if bal, _, paid, _ := e.store.Totals(ctx); bal != big || paid != 1 {
				t.Fatalf("balance %d, %d paid; want %d, 1", bal, paid, int64(big))
			}
			for _, id := range []int64{3, 5} {
				if o, _ := e.store.Order(ctx, id); o.Status != recharge.StatusUnpaid {
					t.Errorf("order %d is %q; want unpaid", id, o.Status)
				}
			}
		})
	}
}
