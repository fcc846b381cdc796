package recharge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestCommitReplyLostRetryReplayed: a payment whose COMMIT reaches
// PostgreSQL while its connection breaks before the reply (the credit is
// committed, the answer lost) is answered as a failure; the client's retry
// with the same Idempotency-Key gets the payment's answer, credited, and the
// account is credited once.
func TestCommitReplyLostRetryReplayed(t *testing.T) {
	ctx := t.Context()
	pg := postgres.Get(t)
	dsn := pg.NewDatabase(t)
	proxy := netproxy.New(t, pg.Addr)
	store, err := recharge.OpenPostgres(ctx, strings.Replace(dsn, pg.Addr, proxy.Addr, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	rc := node.Client(t)
	prefix := redistest.Prefix(t)
	locks, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	idem, err := idempotency.NewStore(rc, idempotency.WithPrefix(prefix+"idem:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idem.Close)
	svc := &recharge.Service{Store: store, Work: func(context.Context, recharge.Order) error { return nil }}
	srv, err := recharge.NewServer(recharge.Config{Service: svc, Locks: locks, Idempotency: idem})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	e := &env{store: store, svc: svc, url: url, grpc: gc}

	proxy.HoldOn("commit")
	first := make(chan httpAnswer, 1)
	go func() { first <- e.post(t, "1", "k1") }()
	deadline := time.Now().Add(10 * time.Second)
	for !proxy.HeldOn() {
		if time.Now().After(deadline) {
			t.Fatal("the payment's commit never came")
		}
		time.Sleep(5 * time.Millisecond)
	}
	proxy.CutHeld()
	a := <-first
	if a.code != http.StatusServiceUnavailable {
		t.Errorf("first, its commit's reply lost: %d %s; want 503", a.code, strings.TrimSpace(a.body))
	}
	proxy.Thaw() // the commit reaches the server now: the credit is made
	for {
		if _, ok, err := store.Payment(ctx, 1); err == nil && ok {
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
}
