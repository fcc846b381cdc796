package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyZeroOptions: a nil WithStoredCodes and a WithMaxStoredResponse
// of zero or less mean their defaults, as a nil WithIdempotencyScope does: the
// call runs (no nil function called at request time) and is replayed.
func TestIdempotencyZeroOptions(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), "charged"), nil
	}}
	for i, opts := range [][]grpclock.IdempotencyOption{
		{grpclock.WithStoredCodes(nil)},
		{grpclock.WithMaxStoredResponse(0)},
		{grpclock.WithMaxStoredResponse(-1)},
	} {
		conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovery,
			grpclock.IdempotencyUnaryServerInterceptor(store, opts...))})
		key := "zero-" + string(rune('a'+i))
		first, err := call(withKey(key), conn, "Pay", order("1", "", 0, ""))
		if err != nil {
			t.Errorf("options %d: first call: %v", i, err)
			continue
		}
		again, err := call(withKey(key), conn, "Pay", order("1", "", 0, ""))
		if err != nil || !proto.Equal(first, again) {
			t.Errorf("options %d: retry: %v (%s), want the first response replayed", i, again, status.Code(err))
		}
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("handler ran %d times for 3 keys", n)
	}
}
