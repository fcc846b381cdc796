package recharge_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
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

	loseCommitReply(t, e, proxy)
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

// TestCommitRefusedNotUnconfirmed: a payment whose COMMIT the server
// answered with a refusal (here: its session ended by
// idle_in_transaction_session_timeout while the COMMIT was on its way, the
// transaction rolled back) is known not made. It does not count as
// Unconfirmed in Service.Counts, which would say the balances may hold a
// credit of it, for as long as the order is not recharged again here.
func TestCommitRefusedNotUnconfirmed(t *testing.T) {
	t.Parallel()
	_, proxy, dsn := proxiedPostgres(t)
	// Sessions idle in a transaction end after 1 s, far inside the 10 s the
	// payment waits for its COMMIT's reply: the server's answer comes first.
	proxied := strings.Replace(dsn, postgres.Get(t).Addr, proxy.Addr, 1) + "&idle_in_transaction_session_timeout=1000"
	e := newEnv(t, backend{"PostgreSQL through a proxy", func(t *testing.T) *recharge.Store {
		t.Helper()
		s, err := recharge.OpenPostgres(t.Context(), proxied)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}, 1, noWork, nil, true)

	// The server ends the session idle before the COMMIT reaches it; the
	// payment's process then reads the server's answer.
	if a := payHeldTillIdleEnded(t, e, proxy, dsn, "commit", "the payment's commit"); a.code != http.StatusServiceUnavailable {
		t.Errorf("payment whose commit was refused: %d %s; want 503", a.code, strings.TrimSpace(a.body))
	}
	if bal := e.balance(t); bal != 0 {
		t.Fatalf("balance %d after the commit was refused; want 0", bal)
	}
	if c := e.svc.Counts(); c != (recharge.Counts{}) {
		t.Errorf("service counts %+v after a commit the server refused; want none (nothing made, nothing unconfirmed)", c)
	}
}

// TestCommitReplyLostUnsafeRetryCredited: without the lock (Service.Unsafe)
// there is no token to tell a payment by, but its request is recorded with
// it: a payment whose COMMIT got no reply counts as Unconfirmed until the
// retry with its Idempotency-Key finds it made, then as Credited, not as
// AlreadyProcessed, which would say no credit was made.
func TestCommitReplyLostUnsafeRetryCredited(t *testing.T) {
	t.Parallel()
	bk, proxy, _ := proxiedPostgres(t)
	store := bk.open(t)
	if err := store.Seed(t.Context(), 1, 1, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	idem, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)+"idem:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idem.Close)
	svc := &recharge.Service{Store: store, Work: noWork, Unsafe: true}
	srv, err := recharge.NewServer(recharge.Config{Service: svc, Idempotency: idem})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	e := &env{store: store, svc: svc, url: url, grpc: gc}

	loseCommitReply(t, e, proxy)
	if again := e.post(t, "1", "k1"); again.code != http.StatusOK || again.out.Outcome != "credited" || !again.replayed {
		t.Errorf("retry after the lost commit reply: %d %s (replayed %v); want credited, replayed", again.code, strings.TrimSpace(again.body), again.replayed)
	}
	if bal := e.balance(t); bal != amount {
		t.Errorf("balance %d; want %d", bal, amount)
	}
	if c := e.svc.Counts(); c.Credited != 1 || c.AlreadyProcessed != 0 || c.Unconfirmed != 0 {
		t.Errorf("service counts %+v after the retry found the credit; want 1 credited, none already processed or unconfirmed", c)
	}
}

// TestCommitReplyLostOtherRequestAlreadyProcessed: a payment whose COMMIT
// got no reply, found made by a later recharge of the order that is not its
// retry (another Idempotency-Key, or none), counts as Credited, and that
// later request's answer, already processed, counts as AlreadyProcessed as
// any other: only the replayed answer of the payment itself is the credit.
func TestCommitReplyLostOtherRequestAlreadyProcessed(t *testing.T) {
	t.Parallel()
	bk, proxy, _ := proxiedPostgres(t)
	e := newEnv(t, bk, 1, noWork, nil, true)

	loseCommitReply(t, e, proxy)
	if other := e.post(t, "1", ""); other.code != http.StatusOK || other.out.Outcome != "already processed" {
		t.Errorf("another request for the order: %d %s; want already processed", other.code, strings.TrimSpace(other.body))
	}
	if c := e.svc.Counts(); c.Credited != 1 || c.AlreadyProcessed != 1 || c.Unconfirmed != 0 {
		t.Errorf("service counts %+v after another request found the credit; want 1 credited, 1 already processed, none unconfirmed", c)
	}
}

// loseCommitReply makes order 1's payment, with Idempotency-Key k1, whose
// COMMIT reaches PostgreSQL only after its connection broke (the credit is
// made, the answer lost): answered 503 and counted Unconfirmed. It returns
// once the credit has landed.
func loseCommitReply(t *testing.T, e *env, proxy *netproxy.Proxy) {
	t.Helper()
	proxy.HoldOn("commit")
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	waitHeld(t, proxy, "the payment's commit", func() bool { return true })
	proxy.CutHeld()
	if a := <-first; a.code != http.StatusServiceUnavailable {
		t.Errorf("first, its commit's reply lost: %d %s; want 503", a.code, strings.TrimSpace(a.body))
	}
	if c := e.svc.Counts(); c.Credited != 0 || c.Unconfirmed != 1 {
		t.Errorf("service counts %+v after the commit's reply was lost; want 1 unconfirmed, none credited", c)
	}
	proxy.Thaw() // the commit reaches the server now: the credit is made
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, err := e.store.Payment(t.Context(), 1); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held commit never landed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
