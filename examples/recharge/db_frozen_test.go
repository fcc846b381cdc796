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

// TestDatabaseFrozenUnavailable: a PostgreSQL server that stops answering
// (a network partition: nothing refused, nothing answered) while a
// recharge claims its order is answered 503 with Retry-After once the
// write timeout has passed, as a database that cannot be reached at any
// step is, rather than held for as long as the client waits, with the
// order's lock and the Idempotency-Key claimed all along; the retry with
// the same key, once the server answers again, credits the order once.
func TestDatabaseFrozenUnavailable(t *testing.T) {
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
