package recharge_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDatabaseFrozenUnavailable: a PostgreSQL server that stops answering
// (a network partition: nothing refused, nothing answered) while a
// recharge claims its order is answered 503 with Retry-After once the
// write timeout has passed, as a database that cannot be reached at any
// step is, rather than held for as long as the client waits, with the
// order's lock and the Idempotency-Key claimed all along; the retry with
// the same key, once the server answers again, credits the order once.
func TestDatabaseFrozenUnavailable(t *testing.T) {
	t.Parallel()
	bk, proxy, _ := proxiedPostgres(t)
	e := newEnv(t, bk, 1, noWork, nil, true)

	proxy.Freeze()
	// The write timeout (10 s) and room for a loaded machine; the client
	// here would wait for ever.
	const bound = 30 * time.Second
	first := make(chan httpAnswer, 1)
	start := time.Now()
	go func() { first <- e.post(t, "1", "k1") }()
	select {
	case a := <-first:
		if a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
			t.Errorf("database frozen: %d %s (Retry-After %q) after %s; want 503 with Retry-After", a.code, strings.TrimSpace(a.body), a.retryAfter, time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(bound):
		proxy.Thaw()
		<-first
		t.Fatalf("database frozen: no answer after %s", bound)
	}
	proxy.Thaw()
	proxy.DropAll() // the frozen connections' late bytes: the pool opens new ones
	if a := e.post(t, "1", "k1"); a.code != http.StatusOK || a.out.Outcome != "credited" {
		t.Errorf("retry once the database answers: %d %s; want credited", a.code, strings.TrimSpace(a.body))
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
}
