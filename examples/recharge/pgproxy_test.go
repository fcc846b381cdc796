package recharge_test

import (
	"context"
	"database/sql"
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

// payHeldTillIdleEnded posts order 1's payment with Idempotency-Key k1,
// holds it at statement (netproxy.HoldOn) until its transaction is idle,
// waits for the server to end that session
// (idle_in_transaction_session_timeout), then lets the statement go on and
// returns the payment's answer.
func payHeldTillIdleEnded(t *testing.T, e *env, proxy *netproxy.Proxy, dsn, statement, what string) httpAnswer {
	t.Helper()
	ctx := t.Context()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	idle := func() int {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	proxy.HoldOn(statement)
	defer proxy.Thaw()
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	waitHeld(t, proxy, what, func() bool { return idle() > 0 })
	deadline := time.Now().Add(10 * time.Second)
	for idle() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle transaction was never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	proxy.Thaw()
	return <-first
}
