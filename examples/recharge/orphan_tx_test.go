package recharge_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOrphanedPaymentRolledBack: a payment whose connection to PostgreSQL
// is cut off in the middle of its transaction (the order already marked
// paid in it, the credit not yet sent), while the server keeps the session
// open as it does for a peer gone silent, answers 503; the client's retry
// with the same Idempotency-Key must not wait on the orphaned transaction's
// row lock for as long as the server keeps that session: the orphan is
// rolled back, and the retry credits the order, once.
func TestOrphanedPaymentRolledBack(t *testing.T) {
	t.Parallel()
	bk, proxy, _ := proxiedPostgres(t)
	e := newEnv(t, bk, 1, noWork, nil, true)

	// Held at the credit: the order's row is locked by the transaction.
	proxy.HoldOn("UPDATE accounts")
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	waitHeld(t, proxy, "the credit", func() bool { return true })
	proxy.CutHeld() // the client's side breaks; the server's session stays open, silent
	if a := <-first; a.code != http.StatusServiceUnavailable {
		t.Errorf("first: %d %s; want 503", a.code, strings.TrimSpace(a.body))
	}
	defer proxy.Thaw()

	// The retry: within the write timeout and the time to take the lock
	// again, not for as long as the server keeps the silent session.
	const bound = 30 * time.Second
	retry := make(chan httpAnswer, 1)
	start := time.Now()
	go func() { retry <- e.post(t, "1", "k1") }()
	select {
	case a := <-retry:
		if a.code != http.StatusOK || a.out.Outcome != "credited" {
			t.Errorf("retry: %d %s after %s; want credited", a.code, strings.TrimSpace(a.body), time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(bound):
		t.Fatalf("retry unanswered after %s: it waits on the orphaned transaction's row lock", bound)
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
}
