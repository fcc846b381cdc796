package recharge_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/pgtest"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestDatabaseDownUnavailable: while the database cannot be reached, a
// recharge answers 503 with Retry-After on HTTP and Unavailable on gRPC
// (retry later: nothing was paid), not 500 / Internal, which says the
// request itself failed.
func TestDatabaseDownUnavailable(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t) // a server of this test's own: it is stopped below
	ctx := t.Context()
	store, err := recharge.OpenPostgres(ctx, pg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Seed(ctx, 1, 2, func(int) int64 { return amount }); err != nil {
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
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks, Idempotency: idem})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	e := &env{store: store, url: url, grpc: gc}

	pg.Close()
	if a := e.post(t, "1", "k1"); a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("HTTP, database down: %d %s (Retry-After %q); want 503 with Retry-After", a.code, a.body, a.retryAfter)
	}
	if _, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.Unavailable {
		t.Errorf("gRPC, database down: %v; want Unavailable", err)
	}
}

// TestDatabaseBusyUnavailable: a SQLite database another process keeps
// locked for writing past the busy timeout is answered 503 with
// Retry-After, retry later, as an unreachable server is.
func TestDatabaseBusyUnavailable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits out SQLite's 10 s busy timeout")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "recharge.db")
	store, err := recharge.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Seed(ctx, 1, 1, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	// Another process's writer, holding the write lock.
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	node := redistest.Server(t)
	locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks, Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	url, gc := serve(t, srv)
	e := &env{store: store, url: url, grpc: gc}
	if a := e.post(t, "1", ""); a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("HTTP, database locked by another writer: %d %s (Retry-After %q); want 503 with Retry-After", a.code, a.body, a.retryAfter)
	}
}
