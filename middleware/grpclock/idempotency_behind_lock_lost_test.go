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

// TestIdempotencyBehindLockLostFailure: with the lock interceptor further
// out than the idempotency interceptor, a handler that fails with a code
// the idempotency interceptor stores (FailedPrecondition) after its lock
// was lost is answered Aborted by the lock interceptor. That failure is no
// answer the client got, so it is not stored: the retry runs the call, as
// with the idempotency interceptor in front of the lock, rather than being
// replayed a FailedPrecondition the first call never answered.
func TestIdempotencyBehindLockLostFailure(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	store := env.Store(t)
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		if runs.Add(1) > 1 {
			return order("", "", 0, "paid"), nil
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(r, "order_id").String()).Key())
		<-ctx.Done() // the lock is lost: the order's state cannot be trusted
		return nil, status.Error(codes.FailedPrecondition, "order changed meanwhile")
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.UnaryServerInterceptor(locks, lockOpts(env)...),
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay")))})
	if _, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Aborted {
		t.Fatalf("first: %v, want the lock interceptor's Aborted", err)
	}
	got, err := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	if err != nil || field(got, "note").String() != "paid" || runs.Load() != 2 {
		t.Fatalf("retry: %v %v, handler runs %d; want the call run again (note \"paid\", 2 runs), not a replay of a failure the client never got",
			got, err, runs.Load())
	}
}

// TestIdempotencyInnerOuterClaimLostFailure: likewise for an inner
// idempotency interceptor of another scope under an outer one whose claim
// is lost: the outer one answers the failure Aborted, so the inner one
// stores nothing and the retry runs the call.
func TestIdempotencyInnerOuterClaimLostFailure(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t, idempotency.WithClaimTTL(600*time.Millisecond))
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, _ *dynamicpb.Message) (proto.Message, error) {
		if runs.Add(1) > 1 {
			return order("", "", 0, "paid"), nil
		}
		env.Node.Do(t, "DEL", store.RecordKey("outer", "K")) // the outer claim is lost
		<-ctx.Done()
		return nil, status.Error(codes.FailedPrecondition, "order changed meanwhile")
	}}
	scoped := func(scope string) grpc.UnaryServerInterceptor {
		return grpclock.IdempotencyUnaryServerInterceptor(store,
			grpclock.WithIdempotencyScope(func(context.Context) string { return scope }))
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(scoped("outer"), scoped("inner"))})
	if _, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Aborted {
		t.Fatalf("first: %v, want the outer interceptor's Aborted", err)
	}
	got, err := call(withKey("K"), conn, "Pay", order("1", "", 0, ""))
	if err != nil || field(got, "note").String() != "paid" || runs.Load() != 2 {
		t.Fatalf("retry: %v %v, handler runs %d; want the call run again (note \"paid\", 2 runs), not a replay of a failure the client never got",
			got, err, runs.Load())
	}
}
