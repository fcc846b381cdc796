package grpclock_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestWithIdempotencyKeyReplaces: WithIdempotencyKey on a context that
// carries a key already (set further up, or by a retry loop that sets the key
// again on its context) makes the calls carry the key given, once: with both
// keys the server refused every call with InvalidArgument ("given 2 times").
// Other outgoing metadata is kept.
func TestWithIdempotencyKeyReplaces(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var seen metadata.MD
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		seen, _ = metadata.FromIncomingContext(ctx)
		return order("1", "", 1, "ok"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store))})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-tenant", "t1")
	ctx = grpclock.WithIdempotencyKey(ctx, "first")
	ctx = grpclock.WithIdempotencyKey(ctx, "second")
	if _, err := call(ctx, conn, "Pay", order("1", "", 0, "a")); err != nil {
		t.Fatalf("call with the key set twice: %v; want it run with the last key", err)
	}
	if k, tenant := seen.Get(grpclock.MetadataIdempotencyKey), seen.Get("x-tenant"); len(k) != 1 || k[0] != "second" || len(tenant) != 1 || tenant[0] != "t1" {
		t.Errorf("server saw idempotency-key %q x-tenant %q; want [second] [t1]", k, tenant)
	}
}
