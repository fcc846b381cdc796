package recharge_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCommitReplyLostRetryReplayed: a payment whose COMMIT reaches
// PostgreSQL while its connection breaks before the reply (the credit is
// committed, the answer lost) is answered as a failure; the client's retry
// with the same Idempotency-Key gets the payment's answer, credited, and the
// account is credited once. Until the retry the payment counts as
// unconfirmed in Service.Counts, then as credited.
func TestCommitReplyLostRetryReplayed(t *testing.T) {
	t.Parallel()
	bk, proxy, _ := proxiedPostgres(t)
	e := newEnv(t, bk, 1, noWork, nil, true)

	proxy.HoldOn("commit")
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	waitHeld(t, proxy, "the payment's commit", func() bool { return true })
	proxy.CutHeld()
	a := <-first
	if a.code != http.StatusServiceUnavailable {
		t.Errorf("first, its commit's reply lost: %d %s; want 503", a.code, strings.TrimSpace(a.body))
	}
	if c := e.svc.Counts(); c.Credited != 0 || c.Unconfirmed != 1 {
		t.Errorf("service counts %+v after the commit's reply was lost; want 1 unconfirmed, none credited", c)
	}
	proxy.Thaw() // the commit reaches the server now: the credit is made
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, err := e.store.Payment(t.Context(), 1); err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the held commit never landed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	again := e.post(t, "1", "k1")
	if again.code != http.StatusOK || again.out.Outcome != "credited" || again.out.Amount != amount {
		t.Errorf("retry after the lost commit reply: %d %s; want credited", again.code, strings.TrimSpace(again.body))
	}
	if !again.replayed {
		t.Errorf("retry after the lost commit reply not marked Idempotent-Replayed")
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
	// The credit was made by this service; the replay found it out.
	if c := e.svc.Counts(); c.Credited != 1 || c.AlreadyProcessed != 0 || c.Unconfirmed != 0 {
		t.Errorf("service counts %+v after the retry found the credit; want 1 credited, none already processed or unconfirmed", c)
	}
}
