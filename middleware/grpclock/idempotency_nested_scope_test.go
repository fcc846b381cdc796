package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyNestedOtherScope: an inner idempotency interceptor on the
// same store but with a scope of its own (the tenant, where the outer one
// scopes by credentials) keeps its own records: a retry whose credentials
// changed is a new call to the outer interceptor but the same one to the
// inner, which replays the response instead of running the handler again.
func TestIdempotencyNestedOtherScope(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		return order("1", "", runs.Add(1), "ok"), nil
	}}
	tenant := grpclock.WithIdempotencyScope(func(ctx context.Context) string {
		md, _ := metadata.FromIncomingContext(ctx)
		return md.Get("x-tenant")[0]
	})
	outer := grpclock.IdempotencyUnaryServerInterceptor(store)
	inner := grpclock.IdempotencyUnaryServerInterceptor(store, tenant)
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(outer, inner)})
	with := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(withKey("n1"), "x-tenant", "t1", "authorization", token)
	}
	first, err := call(with("Bearer old"), conn, "Pay", order("1", "", 0, "a"))
	if err != nil || runs.Load() != 1 {
		t.Fatalf("first: %v, handler runs %d; want the handler's response", err, runs.Load())
	}
	var hdr metadata.MD
	again, err := call(with("Bearer rotated"), conn, "Pay", order("1", "", 0, "a"), grpc.Header(&hdr))
	if err != nil || !proto.Equal(first, again) || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 1 || runs.Load() != 1 {
		t.Fatalf("retry with new credentials: %v %v header %v, handler runs %d; want %v replayed by the inner interceptor, one run",
			again, err, hdr, runs.Load(), first)
	}
}
