package grpclock_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyRetryDroppedLoggedGRPC: a response whose store failed and
// that the store does not retry (its background retries are all taken) is
// logged as an error (it is lost: a retry after the claim TTL runs again), not
// as a warning that it will be stored later.
func TestIdempotencyRetryDroppedLoggedGRPC(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(5*time.Second), idempotency.WithMaxBackgroundRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	var logs syncBuffer
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		node.Kill() // after the claim, before the response is stored
		return order("", "", 1, "charged"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotencyLogger(slog.New(slog.NewTextHandler(&logs, nil)))))})
	if _, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "")); err != nil {
		t.Fatalf("first: %v, want the handler's response", err)
	}
	out := logs.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "not retried") || strings.Contains(out, "not stored yet") {
		t.Errorf("log %q, want an error that the response is not retried", out)
	}
}
