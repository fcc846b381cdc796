package recharge_test

import (
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/pgtest"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestDatabaseReadOnlyUnavailable: a PostgreSQL server that takes no writes
// for now (a primary demoted in a failover, read-only until the connections
// reach the new one: "cannot execute UPDATE in a read-only transaction")
// is answered 503 with Retry-After on HTTP and Unavailable on gRPC, retry
// later, as an unreachable one is; not 500 / Internal, which says the
// request itself failed.
func TestDatabaseReadOnlyUnavailable(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t) // a server of this test's own: it is made read-only below
	ctx := t.Context()
	e := postgresEnv(t, pg.NewDatabase(t))

	for _, q := range []string{"ALTER SYSTEM SET default_transaction_read_only = on", "SELECT pg_reload_conf()"} {
		if _, err := e.store.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Every pooled session reads the reloaded setting before its next command.
	time.Sleep(500 * time.Millisecond)
	if a := e.post(t, "1", ""); a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("HTTP, database read-only: %d %s (Retry-After %q); want 503 with Retry-After", a.code, a.body, a.retryAfter)
	}
	if _, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.Unavailable {
		t.Errorf("gRPC, database read-only: %v; want Unavailable", err)
	}
}

// postgresEnv serves the recharge service on the PostgreSQL database dsn,
// seeded with orders 1 and 2, and a redis-server of the test's own.
func postgresEnv(t *testing.T, dsn string) *env {
	t.Helper()
	ctx := t.Context()
	store, err := recharge.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Seed(ctx, 1, 2, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	return &env{store: store, url: url, grpc: gc}
}
