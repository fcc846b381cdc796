package recharge_test

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPaymentEndedIdleUnavailable: a payment whose transaction sat idle
// past idle_in_transaction_session_timeout (its process stalled between two
// statements, within the write timeout) has had its session ended by the
// server, the transaction rolled back: nothing was paid, and the payment
// is answered 503 with Retry-After, as a database that refused the work
// for now, not 500; the retry with the same Idempotency-Key credits the
// order once.
func TestPaymentEndedIdleUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	bk, proxy, dsn := proxiedPostgres(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	e := newEnv(t, bk, 1, noWork, nil, true)

	// The credit is held back: the transaction is idle, the order marked
	// paid in it.
	proxy.HoldOn("UPDATE accounts")
	defer proxy.Thaw()
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	idle := func() int {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitHeld(t, proxy, "the credit", func() bool { return idle() > 0 })
	// The server ends the idle session; the payment's process, resumed
	// within its write timeout, sends the credit on it.
	deadline := time.Now().Add(10 * time.Second)
	for idle() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle transaction was never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	proxy.Thaw()
	if a := <-first; a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("payment whose session the server ended idle: %d %s (Retry-After %q); want 503 with Retry-After", a.code, strings.TrimSpace(a.body), a.retryAfter)
	}
	if a := e.post(t, "1", "k1"); a.code != http.StatusOK || a.out.Outcome != "credited" {
		t.Errorf("retry: %d %s; want credited", a.code, strings.TrimSpace(a.body))
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
}
