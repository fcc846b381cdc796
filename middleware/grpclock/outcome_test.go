package grpclock_test

import (
	"context"
	"slices"
	"strings"
	"sync"
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

func TestWithOutcome(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
		grpclock.UnaryServerInterceptor(locks, lockOpts(env, grpclock.WithOutcome(report))...))})
	ctx := context.Background()
	_, _ = call(ctx, conn, "Pay", order("1", "", 0, ""))
	_, _ = call(ctx, conn, "Pay", order(strings.Repeat("k", 300), "", 0, ""))
	hctx := scriptlock.WithOwner(ctx, "holder")
	if _, err := env.Lock(t, locks, env.Prefix+"busy").Lock(hctx); err != nil {
		t.Fatal(err)
	}
	_, _ = call(ctx, conn, "Pay", order("busy", "", 0, ""))
	_, _ = call(ctx, conn, "Ping", order("", "", 0, "")) // not locked: no outcome
	env.Node.Kill()
	_, _ = call(ctx, conn, "Pay", order("2", "", 0, ""))
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestLocked, scriptlock.RequestKeyInvalid,
		scriptlock.RequestContended, scriptlock.RequestRedisDown}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

func TestWithIdempotencyOutcome(t *testing.T) {
	t.Parallel()
	store, node := idemStore(t)
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	s := &server{unary: fenceReply}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotentMethods(svc+"Pay"), grpclock.WithIdempotencyOutcome(report)))})
	_, _ = call(withKey("k1"), conn, "Pay", order("1", "", 0, "a"))
	_, _ = call(withKey("k1"), conn, "Pay", order("1", "", 0, "a"))
	_, _ = call(withKey("k1"), conn, "Pay", order("1", "", 0, "b"))
	_, _ = call(withKey(`"bad`), conn, "Pay", order("1", "", 0, "a"))
	_, _ = call(context.Background(), conn, "Pay", order("1", "", 0, "a")) // no key, not required: nothing to report
	node.Kill()
	_, _ = call(withKey("k2"), conn, "Pay", order("1", "", 0, "a"))
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestReplayed,
		scriptlock.RequestIdempotencyConflict, scriptlock.RequestKeyInvalid, scriptlock.RequestRedisDown}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

// TestWithIdempotencyOutcomeNotReplayable: a duplicate of a completed call
// whose response was too large to store gets AlreadyExists and no replay, so
// it is counted as a conflict, not as replayed.
func TestWithIdempotencyOutcomeNotReplayable(t *testing.T) {
	t.Parallel()
	store, _ := idemStore(t)
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	s := &server{unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) {
		return order("", "", 1, strings.Repeat("x", 300)), nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainUnaryInterceptor(grpclock.IdempotencyUnaryServerInterceptor(store,
		grpclock.WithIdempotentMethods(svc+"Pay"), grpclock.WithMaxStoredResponse(256), grpclock.WithIdempotencyOutcome(report)))})
	if _, err := call(withKey("k1"), conn, "Pay", order("1", "", 0, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := call(withKey("k1"), conn, "Pay", order("1", "", 0, "a")); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("duplicate of an unstored response: %v, want AlreadyExists", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestIdempotencyConflict}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
