package recharge_test

import (
	"net/http"
	"strings"
	"testing"
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
	bk, proxy, dsn := proxiedPostgres(t)
	e := newEnv(t, bk, 1, noWork, nil, true)

	// The credit is held back: the transaction is idle, the order marked
	// paid in it. The server ends the idle session; the payment's process,
	// resumed within its write timeout, sends the credit on it.
	if a := payHeldTillIdleEnded(t, e, proxy, dsn, "UPDATE accounts", "the credit"); a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("payment whose session the server ended idle: %d %s (Retry-After %q); want 503 with Retry-After", a.code, strings.TrimSpace(a.body), a.retryAfter)
	}
	if a := e.post(t, "1", "k1"); a.code != http.StatusOK || a.out.Outcome != "credited" {
		t.Errorf("retry: %d %s; want credited", a.code, strings.TrimSpace(a.body))
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
}
