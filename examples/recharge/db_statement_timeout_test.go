package recharge_test

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
)

// TestDatabaseStatementTimeoutUnavailable: a PostgreSQL server that cancels
// a statement past its statement_timeout (a server under load, or a row
// another transaction keeps locked; "canceling statement due to statement
// timeout"), or past its lock_timeout ("canceling statement due to lock
// timeout"), has done nothing of it: the recharge answers 503 with
// Retry-After on HTTP and Unavailable on gRPC, retry later, not 500 /
// Internal, which says the request itself failed.
func TestDatabaseStatementTimeoutUnavailable(t *testing.T) {
	t.Parallel()
	for _, setting := range []string{"statement_timeout", "lock_timeout"} {
		t.Run(setting, func(t *testing.T) {
			t.Parallel()
			statementTimedOut(t, setting)
		})
	}
}

func statementTimedOut(t *testing.T, setting string) {
	ctx := t.Context()
	dsn := postgres.Get(t).NewDatabase(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET "+setting+" = '300ms'"); err != nil {
		t.Fatal(err)
	}
	e := postgresEnv(t, dsn)

	// Another transaction keeps both orders' rows locked.
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM orders FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	if a := e.post(t, "1", ""); a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("HTTP, statement timed out: %d %s (Retry-After %q); want 503 with Retry-After", a.code, a.body, a.retryAfter)
	}
	if _, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.Unavailable {
		t.Errorf("gRPC, statement timed out: %v; want Unavailable", err)
	}
}
