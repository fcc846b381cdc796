package grpclock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyClaimLostGRPC: when a running call's claim ends, the
// handler's context ends with idempotency.ErrClaimLost, the client gets
// Aborted and nothing is stored, so the retry runs.
func TestIdempotencyClaimLostGRPC(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	env := mwtest.New(t)
	store := env.Store(t, idempotency.WithClaimTTL(300*time.Millisecond))
	causes := make(chan error, 2)
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		if field(r, "note").String() == "lose" {
			env.DropRecords(t)
		}
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-time.After(3 * time.Second):
			causes <- nil
			return order("", "", 1, "charged"), nil
		}
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotentMethods(svc+"Pay")))})
	_, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "lose"))
	if cause := <-causes; !errors.Is(cause, idempotency.ErrClaimLost) {
		t.Fatalf("handler context cause %v, want idempotency.ErrClaimLost", cause)
	}
	if status.Code(err) != codes.Aborted {
		t.Fatalf("claim lost: %v, want Aborted", err)
	}
	// The retry is a new call with the same key and payload: it must run.
	if _, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "lose")); status.Code(err) != codes.Aborted {
		t.Fatalf("retry (its claim lost too): %v, want Aborted", err)
	}
	if cause := <-causes; !errors.Is(cause, idempotency.ErrClaimLost) {
		t.Fatalf("retry did not run: cause %v", cause)
	}
}

// TestLockLostAfterWork: a handler that finished its work and returned a
// response although its lock was lost meanwhile keeps that response (as an
// HTTP response already written does): Aborted would tell the client that
// nothing was done. The idempotency interceptor in front stores it, so a
// retry gets it replayed instead of running again.
func TestLockLostAfterWork(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	s := &server{unary: func(ctx context.Context, _ string, r *dynamicpb.Message) (proto.Message, error) {
		n := runs.Add(1)
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(r, "order_id").String()).Key())
		<-ctx.Done() // the loss is seen; the work was already committed
		if field(r, "note").String() == "fail" {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return order("", "", n, "committed"), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay")),
		grpclock.UnaryServerInterceptor(locks, lockOpts(env)...))})
	got, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "done"))
	if err != nil || field(got, "note").String() != "committed" {
		t.Fatalf("lock lost after the work: %v %v, want the handler's response", got, err)
	}
	var hdr metadata.MD
	again, err := call(withKey("K"), conn, "Pay", order("1", "", 0, "done"), grpc.Header(&hdr))
	if err != nil || !proto.Equal(got, again) || len(hdr.Get(grpclock.MetadataIdempotentReplayed)) != 1 || runs.Load() != 1 {
		t.Errorf("retry: %v %v header %v runs %d, want the stored response replayed", again, err, hdr, runs.Load())
	}
	// A handler that fails on the loss still gets Aborted, and is not stored.
	if _, err := call(withKey("K2"), conn, "Pay", order("2", "", 0, "fail")); status.Code(err) != codes.Aborted {
		t.Errorf("failed on the loss: %v, want Aborted", err)
	}
	if _, err := call(withKey("K2"), conn, "Pay", order("2", "", 0, "fail")); status.Code(err) != codes.Aborted || runs.Load() != 3 {
		t.Errorf("retry after Aborted: %v (runs %d), want it to run again", err, runs.Load())
	}
}

// TestIdempotencyBadLockKeyLeavesNothingGRPC: a call refused by the lock
// interceptor for its key never ran, so nothing of it stays in Redis, even
// with a predicate that stores every code.
func TestIdempotencyBadLockKeyLeavesNothingGRPC(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		return order("", "", runs.Add(1), ""), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.IdempotencyUnaryServerInterceptor(store, grpclock.WithIdempotentMethods(svc+"Pay"),
			grpclock.WithStoredCodes(func(codes.Code) bool { return true })),
		grpclock.UnaryServerInterceptor(env.LockFunc(), lockOpts(env)...))})
	for i, id := range []string{"", "a\x00b", "a\u200bb", strings.Repeat("9", 300)} {
		for try := range 2 {
			_, err := call(withKey(fmt.Sprint("K", i)), conn, "Pay", order(id, "", 0, ""))
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("order id %q (try %d): %v, want InvalidArgument", id, try, err)
			}
		}
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("bad input left keys in Redis: %v", keys)
	}
	if runs.Load() != 0 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}
