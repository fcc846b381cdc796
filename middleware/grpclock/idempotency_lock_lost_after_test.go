package grpclock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyStoredFailureLockLostAfter: with the lock interceptor
// further out than the idempotency interceptor, a failure the handler
// returned while its lock was held (FailedPrecondition) is stored by the
// idempotency interceptor. A loss of the lock noticed only after that (here
// while an interceptor between the two runs) must not answer the client
// Aborted: the retry would be replayed a failure the first call never
// answered. The client gets the failure stored, as on Echo, where the
// stored answer is written before the lock middleware looks.
func TestIdempotencyStoredFailureLockLostAfter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	store := env.Store(t)
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return nil, status.Error(codes.FailedPrecondition, "order closed")
	}}
	// Between the two: once the idempotency interceptor has stored the
	// first call's outcome, the lock is lost, and noticed before the lock
	// interceptor looks.
	var calls atomic.Int64
	loseAfter := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if calls.Add(1) > 1 {
			return resp, err
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(req.(*dynamicpb.Message), "order_id").String()).Key())
		<-ctx.Done()
		return resp, err
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.UnaryServerInterceptor(locks, lockOpts(env)...),
		loseAfter,
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay")))})
	_, first := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	_, retry := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	if status.Code(first) != codes.FailedPrecondition || status.Code(retry) != codes.FailedPrecondition || runs.Load() != 1 {
		t.Fatalf("first: %v; retry: %v; handler runs %d; want the stored FailedPrecondition both times, 1 run", first, retry, runs.Load())
	}
}

// TestIdempotencyStoredFailureOuterClaimLostAfter: likewise for an outer
// idempotency interceptor of another scope whose claim is lost after the
// inner one stored the handler's failure: the client gets that failure,
// not Aborted followed by its replay.
func TestIdempotencyStoredFailureOuterClaimLostAfter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t, idempotency.WithClaimTTL(600*time.Millisecond))
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		runs.Add(1)
		return nil, status.Error(codes.FailedPrecondition, "order closed")
	}}
	scoped := func(scope string) grpc.UnaryServerInterceptor {
		return grpclock.IdempotencyUnaryServerInterceptor(store,
			grpclock.WithIdempotencyScope(func(context.Context) string { return scope }))
	}
	var calls atomic.Int64
	loseAfter := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if calls.Add(1) > 1 {
			return resp, err
		}
		env.Node.Do(t, "DEL", store.RecordKey("outer", "K")) // the outer claim is lost
		<-ctx.Done()
		return resp, err
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(scoped("outer"), loseAfter, scoped("inner"))})
	_, first := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	_, retry := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	if status.Code(first) != codes.FailedPrecondition || status.Code(retry) != codes.FailedPrecondition || runs.Load() != 1 {
		t.Fatalf("first: %v; retry: %v; handler runs %d; want the stored FailedPrecondition both times, 1 run", first, retry, runs.Load())
	}
}
