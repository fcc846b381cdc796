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

// TestIdempotencyNestedInterceptors: the idempotency interceptor twice in a
// chain on one store runs the handler once under the outer interceptor's
// claim and replays its response. The inner interceptor tried to claim the
// key the outer one held and answered Aborted "in flight" to every call with
// a key, so the handler never ran.
func TestIdempotencyNestedInterceptors(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		return order("1", "", runs.Add(1), "ok"), nil
	}}
	idem := grpclock.IdempotencyUnaryServerInterceptor(store)
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(idem, idem)})
	first, err := call(withKey("n1"), conn, "Pay", order("1", "", 0, "a"))
	if err != nil {
		t.Fatalf("first: %v; want the handler's response", err)
	}
	var hdr metadata.MD
	again, err := call(withKey("n1"), conn, "Pay", order("1", "", 0, "a"), grpc.Header(&hdr))
	if err != nil || !proto.Equal(first, again) || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 1 || runs.Load() != 1 {
		t.Fatalf("retry: %v %v header %v, handler runs %d; want %v replayed, one run", again, err, hdr, runs.Load(), first)
	}
}
