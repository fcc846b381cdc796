package recharge_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/examples/recharge/rechargepb"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A recharge that fails for a reason clients are not told (here the payment
// cannot be recorded, so the credit is rolled back) is answered 500 /
// Internal without the detail, and the detail goes to Config.Logger on both
// front ends: an operator must be able to find out why a payment was not
// made, whichever front end it came through.
func TestFailedRechargeLogged(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 1, 2, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			// Recording the payment fails, so Pay rolls back and errs.
			if _, err := store.DB().ExecContext(ctx, `ALTER TABLE payments RENAME TO payments_gone`); err != nil {
				t.Fatal(err)
			}
			node := redistest.Server(t)
			locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { locks.Close() })
			var logs logBuffer
			svc := &recharge.Service{Store: store}
			srv, err := recharge.NewServer(recharge.Config{Service: svc, Locks: locks,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			url, gc := serve(t, srv)
			e := &env{store: store, svc: svc, url: url, grpc: gc}

			if a := e.post(t, "1", ""); a.code != http.StatusInternalServerError || strings.Contains(a.body, "payment") {
				t.Errorf("HTTP: %d %s; want 500 without the detail", a.code, a.body)
			}
			if got := logs.String(); !strings.Contains(got, "recharge failed") || !strings.Contains(got, "order=1") || !strings.Contains(got, "record payment of order 1") {
				t.Errorf("HTTP failure not logged with its detail; log:\n%s", got)
			}
			if _, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.Internal {
				t.Errorf("gRPC: %v; want Internal", err)
			}
			if got := logs.String(); !strings.Contains(got, "order=2") || !strings.Contains(got, "record payment of order 2") {
				t.Errorf("gRPC failure not logged with its detail; log:\n%s", got)
			}
			if bal, _, paid, _ := store.Totals(ctx); bal != 0 || paid != 0 {
				t.Fatalf("balance %d, %d paid; want nothing written", bal, paid)
			}
		})
	}
}

// A payment that fails after the request's lock ran out (the process was
// paused past its lease, or its client left) is logged too: the request's
// context has ended, but the write ran and failed for a reason of its own
// (here the payment cannot be recorded, so the credit is rolled back), and
// that reason must not be lost with the 503 / Aborted the client gets.
func TestFailedPaymentAfterLockLossLogged(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := b.open(t)
			if err := store.Seed(ctx, 1, 2, func(int) int64 { return amount }); err != nil {
				t.Fatal(err)
			}
			if _, err := store.DB().ExecContext(ctx, `ALTER TABLE payments RENAME TO payments_gone`); err != nil {
				t.Fatal(err)
			}
			node := redistest.Server(t)
			locks, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { locks.Close() })
			// Long enough for a request to reach its work on a loaded
			// machine before the lease runs out.
			const lease = time.Second
			var logs logBuffer
			// The work outlasts the lease, as a paused process would, and
			// returns only once the lock's context has ended, which a loaded
			// machine may tell late (its loss timer fires late), so that the
			// write runs after the loss.
			svc := &recharge.Service{Store: store, Work: func(ctx context.Context, _ recharge.Order) error {
				select {
				case <-ctx.Done():
				case <-time.After(time.Minute):
				}
				return nil
			}}
			srv, err := recharge.NewServer(recharge.Config{Service: svc, Locks: locks,
				LockOptions: []scriptlock.LockOption{scriptlock.WithLease(lease)},
				Logger:      slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			url, gc := serve(t, srv)
			e := &env{store: store, svc: svc, url: url, grpc: gc}

			if a := e.post(t, "1", ""); a.code != http.StatusServiceUnavailable {
				t.Errorf("HTTP: %d %s; want 503 (lock lost)", a.code, a.body)
			}
			if got := logs.String(); !strings.Contains(got, "record payment of order 1") {
				t.Errorf("HTTP: failed payment after the lock was lost not logged; log:\n%s", got)
			}
			if _, err := e.grpc.Recharge(ctx, &rechargepb.RechargeRequest{OrderId: 2}); status.Code(err) != codes.Aborted {
				t.Errorf("gRPC: %v; want Aborted (lock lost)", err)
			}
			if got := logs.String(); !strings.Contains(got, "record payment of order 2") {
				t.Errorf("gRPC: failed payment after the lock was lost not logged; log:\n%s", got)
			}
			if bal, _, paid, _ := store.Totals(ctx); bal != 0 || paid != 0 {
				t.Fatalf("balance %d, %d paid; want nothing written", bal, paid)
			}
		})
	}
}
