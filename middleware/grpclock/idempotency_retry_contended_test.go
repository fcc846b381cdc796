package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyRetryAfterContended: an interceptor between the
// idempotency and lock interceptors retries a call the lock refused
// (Aborted, the lock was busy) with the same context; the retry takes the
// lock and the handler fails with a final code (NotFound). That outcome is
// stored and replayed to the client's retry with the same key: the first
// attempt's refusal does not mark the handler's error as the lock's.
func TestIdempotencyRetryAfterContended(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc()
	holder := env.Lock(t, locks, env.Prefix+"7")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.TryLock(hctx, 0); err != nil {
		t.Fatal(err)
	}
	retry := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if status.Code(err) == codes.Aborted {
			// The holder is done by now: try once more.
			if uerr := holder.Unlock(hctx); uerr != nil {
				t.Error(uerr)
			}
			return h(ctx, req)
		}
		return resp, err
	}
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return nil, status.Error(codes.NotFound, "no such order")
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay")),
		retry,
		grpclock.UnaryServerInterceptor(locks, lockOpts(env)...))})
	if _, err := call(withKey("k"), conn, "Pay", order("7", "", 0, "")); status.Code(err) != codes.NotFound || runs.Load() != 1 {
		t.Fatalf("first: %v, handler runs %d; want NotFound after the retry, one run", err, runs.Load())
	}
	if _, err := call(withKey("k"), conn, "Pay", order("7", "", 0, "")); status.Code(err) != codes.NotFound || runs.Load() != 1 {
		t.Errorf("client's retry: %v, handler runs %d; want the NotFound replayed and one run", err, runs.Load())
	}
}
