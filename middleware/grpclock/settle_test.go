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
)

// TestIdempotencyPanicAfterHandlerReleases: a panic after the handler
// returned, before its outcome was stored (here in the WithStoredCodes
// predicate), releases the key as a handler's panic does, so the retry runs;
// the claim was kept and renewed, and every retry got Aborted until the
// store closed.
func TestIdempotencyPanicAfterHandlerReleases(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs, checks atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), "ok"), nil
	}}
	storeCode := func(c codes.Code) bool {
		if checks.Add(1) == 1 {
			panic("predicate bug")
		}
		return c == codes.OK
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovery,
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithStoredCodes(storeCode)))})
	if _, err := call(withKey("p"), conn, "Pay", order("1", "", 0, "")); err == nil {
		t.Fatal("first call: no error from the panic")
	}
	r, err := call(withKey("p"), conn, "Pay", order("1", "", 0, ""))
	if err != nil || runs.Load() != 2 {
		t.Errorf("retry after the panic: %v %v (runs %d), want it to run", r, err, runs.Load())
	}
}

// TestIdempotencyOutcomePanicReleases: a panic in the outcome callback when
// it is told that a claimed call runs releases the key, so the retry runs;
// the claim was neither completed nor released, and was renewed for as long
// as the process ran.
func TestIdempotencyOutcomePanicReleases(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var runs, executed atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), "ok"), nil
	}}
	outcome := func(_ context.Context, o scriptlock.RequestOutcome) {
		if o == scriptlock.RequestExecuted && executed.Add(1) == 1 {
			panic("metrics bug")
		}
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovery,
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotencyOutcome(outcome)))})
	if _, err := call(withKey("o"), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Internal {
		t.Fatalf("first call: %v, want the panic's Internal", err)
	}
	r, err := call(withKey("o"), conn, "Pay", order("1", "", 0, ""))
	if err != nil || runs.Load() != 1 {
		t.Errorf("retry after the panic: %v %v (runs %d), want it to run", r, err, runs.Load())
	}
}
