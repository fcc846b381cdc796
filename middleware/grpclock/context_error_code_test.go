package grpclock_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
)

// TestIdempotencyContextErrorCode: a handler that fails with a context
// error that is no status (a database call's own deadline, wrapped) is
// answered DeadlineExceeded by gRPC, and that is the code WithStoredCodes
// decides on and a replay answers: a predicate that leaves DeadlineExceeded
// out lets the retry run, and one that keeps it replays DeadlineExceeded,
// not Unknown.
func TestIdempotencyContextErrorCode(t *testing.T) {
	t.Parallel()
	for _, storeDeadline := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", storeDeadline), func(t *testing.T) {
			store, _ := idemStore(t)
			var runs atomic.Int64
			s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
				runs.Add(1)
				return nil, fmt.Errorf("charge: %w", context.DeadlineExceeded)
			}}
			// Everything is final but what says to try again.
			final := func(c codes.Code) bool {
				switch c {
				case codes.Unavailable, codes.Aborted, codes.ResourceExhausted:
					return false
				case codes.DeadlineExceeded:
					return storeDeadline
				}
				return true
			}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
				grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithStoredCodes(final)))})
			for i := range 2 {
				if _, err := call(withKey("k"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.DeadlineExceeded {
					t.Fatalf("call %d: %v, want DeadlineExceeded", i+1, err)
				}
			}
			want := int64(2)
			if storeDeadline {
				want = 1
			}
			if n := runs.Load(); n != want {
				t.Errorf("handler ran %d times, want %d", n, want)
			}
		})
	}
}
