package recharge_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scriptlock/scriptlock/examples/recharge"
)

// Unsafe drops the lock and the fencing token, and nothing else: an order
// that is neither unpaid nor paid (cancelled) is refused there too, with
// nothing written. It was marked paid and credited, so the unsafe runs
// charged the lock with credits it has nothing to do with.
func TestUnsafeRefusesCancelledOrder(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			if _, err := store.DB().ExecContext(ctx, `UPDATE orders SET status = 'cancelled'`); err != nil {
				t.Fatal(err)
			}
			svc := &recharge.Service{Store: store, Unsafe: true}
			srv, err := recharge.NewServer(recharge.Config{Service: svc})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.HTTPHandler())
			t.Cleanup(hs.Close)
			e := &env{store: store, svc: svc, url: hs.URL}
			if a := e.post(t, "1", ""); a.code != http.StatusConflict {
				t.Errorf("unsafe, cancelled order: %d %s; want 409", a.code, a.body)
			}
			if bal, _, paid, _ := store.Totals(ctx); bal != 0 || paid != 0 {
				t.Errorf("unsafe, cancelled order: balance %d, %d paid; want nothing credited", bal, paid)
			}
			// The store on its own: the unsafe payment (token 0) of a
			// cancelled order is refused as well.
			o, err := store.Order(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Pay(ctx, o, 0, ""); err == nil {
				t.Errorf("unsafe Pay of a cancelled order accepted")
			}
			if o, _ := store.Order(ctx, 1); o.Status != "cancelled" {
				t.Errorf("order is %q; want still cancelled", o.Status)
			}
		})
	}
}
