package recharge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/netproxy"
)

// proxiedPostgres is the PostgreSQL backend reached through a proxy the test
// holds, freezes or cuts; dsn is the database's own address, for a
// connection beside the proxy.
func proxiedPostgres(t *testing.T) (b backend, proxy *netproxy.Proxy, dsn string) {
	t.Helper()
	pg := postgres.Get(t)
	dsn = pg.NewDatabase(t)
	proxy = netproxy.New(t, pg.Addr)
	return backend{"PostgreSQL through a proxy", func(t *testing.T) *recharge.Store {
		t.Helper()
		s, err := recharge.OpenPostgres(t.Context(), strings.Replace(dsn, pg.Addr, proxy.Addr, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}, proxy, dsn
}

// noWork is a payment's work that takes no time.
func noWork(context.Context, recharge.Order) error { return nil }

// waitHeld waits until the proxy holds back the statement it was told to
// (netproxy.HoldOn) and ready() says so too.
func waitHeld(t *testing.T, proxy *netproxy.Proxy, what string, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !proxy.HeldOn() || !ready() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never came", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
