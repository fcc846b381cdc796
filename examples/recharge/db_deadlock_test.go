package recharge_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"

	"google.golang.org/grpc/metadata"
)

// TestDatabaseDeadlockTransient: a recharge whose transaction PostgreSQL
// rolls back as a deadlock victim (40P01; a serialization failure, 40001,
// under REPEATABLE READ or SERIALIZABLE, is the same kind of answer) did
// nothing: it answers 503 with Retry-After on HTTP and Unavailable on gRPC,
// not 500 / Internal, and the Idempotency-Key is released, so the retry with
// the same key runs again and credits the order.
func TestDatabaseDeadlockTransient(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := postgres.Get(t).NewDatabase(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	// The recharge's sessions look for a deadlock soon after they begin to
	// wait; the other transaction's (a session of its own) only later, so
	// that the recharge is the victim (see deadlocked).
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET deadlock_timeout = '300ms'"); err != nil {
		t.Fatal(err)
	}

	store, err := recharge.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	// Orders for the attempts of both front ends (see deadlocked).
	const attempts = 4
	if err := store.Seed(ctx, 1, 2*attempts, func(int) int64 { return amount }); err != nil {
		t.Fatal(err)
	}
	node := redistest.Server(t)
	rc := node.Client(t)
	locks, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locks.Close() })
	idem, err := idempotency.NewStore(rc, idempotency.WithPrefix(redistest.Prefix(t)+"idem:"))
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

	// deadlocked runs call while another transaction holds the account's
	// row and then asks for the order's, which the recharge holds while it
	// waits for the account's: a deadlock. It reports whether the recharge
	// was its victim. PostgreSQL looks for a deadlock once per wait, after
	// deadlock_timeout: the recharge's session does so 300 ms after it began
	// to wait, and finds none when the other transaction asked for the
	// order's row only later (this process descheduled under load). The
	// other transaction then finds it, 2 s after it began to wait, and is the
	// victim itself (40P01): the recharge goes on, and the attempt proves
	// nothing (it would have passed on the recharge's own timeout too).
	deadlocked := func(order int64, call func()) bool {
		t.Helper()
		conn, err := admin.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET deadlock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM accounts FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			call()
		}()
		defer func() {
			tx.Rollback() // before waiting for the recharge, which may wait for it
			<-done
		}()
		// Until the recharge waits for the account's row, holding the order's.
		for deadline := time.Now().Add(10 * time.Second); ; {
			var n int
			if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the recharge never waited for the account's row")
			}
			time.Sleep(5 * time.Millisecond)
		}
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err = tx.ExecContext(lctx, "SELECT 1 FROM orders WHERE id = $1 FOR UPDATE", order)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return true // the recharge's transaction was rolled back
		case errors.As(err, &pe) && pe.Code == "40P01":
			t.Logf("order %d: the other transaction was the deadlock victim; again with another order", order)
			return false
		}
		t.Fatalf("the other transaction: %v", err)
		return false
	}
	// victim runs the scenario with the orders from first on until the
	// recharge is the victim, and returns that order's id.
	victim := func(first int64, call func(order int64)) int64 {
		t.Helper()
		for order := first; order < first+attempts; order++ {
			if deadlocked(order, func() { call(order) }) {
				return order
			}
		}
		t.Fatalf("the recharge was never the deadlock victim in %d attempts", attempts)
		return 0
	}

	var a httpAnswer
	key := func(order int64) string { return "k" + strconv.FormatInt(order, 10) }
	order := victim(1, func(order int64) { a = e.post(t, strconv.FormatInt(order, 10), key(order)) })
	if a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
		t.Errorf("HTTP, deadlock victim: %d %s (Retry-After %q); want 503 with Retry-After", a.code, a.body, a.retryAfter)
	}
	if a := e.post(t, strconv.FormatInt(order, 10), key(order)); a.code != http.StatusOK || a.replayed || a.out.Outcome != "credited" {
		t.Errorf("HTTP retry with the same key: %d %s replayed=%v; want the order credited by this run", a.code, a.body, a.replayed)
	}

	var gerr error
	order = victim(1+attempts, func(order int64) {
		mctx := metadata.AppendToOutgoingContext(ctx, grpclock.MetadataIdempotencyKey, key(order))
		_, gerr = e.grpc.Recharge(mctx, &rechargepb.RechargeRequest{OrderId: order})
	})
	if status.Code(gerr) != codes.Unavailable {
		t.Errorf("gRPC, deadlock victim: %v; want Unavailable", gerr)
	}
	mctx := metadata.AppendToOutgoingContext(ctx, grpclock.MetadataIdempotencyKey, key(order))
	var hdr metadata.MD
	if out, err := e.grpc.Recharge(mctx, &rechargepb.RechargeRequest{OrderId: order}, grpc.Header(&hdr)); err != nil || out.GetOutcome() != rechargepb.RechargeResponse_CREDITED || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 0 {
		t.Errorf("gRPC retry with the same key: %v %v replayed=%v; want the order credited by this run", out, err, hdr.Get(grpclock.MetadataIdempotentReplayed))
	}
}
