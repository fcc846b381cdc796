package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyResponseNotMarshalable: an OK response that gRPC cannot
// marshal (a proto3 string field not valid UTF-8, a handler quoting a
// client's bytes) reaches the client as Internal. That is the outcome
// WithStoredCodes decides on: by default the key is released and the retry
// runs again (and is answered alike); with Internal stored, the retry gets
// that same Internal replayed. It was recorded as an OK whose response was
// not stored, and the retry got AlreadyExists, an answer the first call
// never had.
func TestIdempotencyResponseNotMarshalable(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return order("", "", 0, "charged \xff"+field(r, "note").String()), nil
	}}
	for _, tc := range []struct {
		name   string
		opts   []grpclock.IdempotencyOption
		replay bool
	}{
		{"default", nil, false},
		{"internal stored", []grpclock.IdempotencyOption{grpclock.WithStoredCodes(func(c codes.Code) bool { return c == codes.Internal })}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs.Store(0)
			conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store, tc.opts...))})
			key := "k-" + tc.name
			_, err := call(withKey(key), conn, "Pay", order("1", "", 0, "a"))
			first := status.Convert(err)
			if first.Code() != codes.Internal {
				t.Fatalf("first call: %v, want Internal, as gRPC answers a response it cannot marshal", err)
			}
			var hdr metadata.MD
			_, err = call(withKey(key), conn, "Pay", order("1", "", 0, "a"), grpc.Header(&hdr))
			again := status.Convert(err)
			if again.Code() != first.Code() || again.Message() != first.Message() {
				t.Fatalf("retry: %v %q, want the first answer %v %q (run again or replayed)", again.Code(), again.Message(), first.Code(), first.Message())
			}
			replayed := len(hdr.Get(grpclock.MetadataIdempotentReplayed)) > 0
			wantRuns := map[bool]int64{true: 1, false: 2}[tc.replay]
			if replayed != tc.replay || runs.Load() != wantRuns {
				t.Fatalf("retry replayed %v, handler ran %d times; want replayed %v, %d runs", replayed, runs.Load(), tc.replay, wantRuns)
			}
		})
	}
}
