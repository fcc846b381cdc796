package grpclock_test

import (
	"context"
	"slices"
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

// streamRecovery turns stream handler panics into Internal.
func streamRecovery(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "panic: %v", r)
		}
	}()
	return h(srv, ss)
}

// TestOutcomePanic: WithOutcome gets the outcome of every call the
// interceptor locks, one whose handler panicked under the lock included
// (locked), unary and streaming; it got nothing for it.
func TestOutcomePanic(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var mu sync.Mutex
	var got []scriptlock.RequestOutcome
	report := func(_ context.Context, o scriptlock.RequestOutcome) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	s := &server{
		unary: func(context.Context, string, *dynamicpb.Message) (proto.Message, error) { panic("boom") },
		stream: func(st grpc.ServerStream) error {
			if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
				return err
			}
			panic("boom")
		},
	}
	opts := lockOpts(env, grpclock.WithOutcome(report))
	conn := start(t, s, []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(recovery, grpclock.UnaryServerInterceptor(env.LockFunc(), opts...)),
		grpc.ChainStreamInterceptor(streamRecovery, grpclock.StreamServerInterceptor(env.LockFunc(), opts...)),
	})
	if _, err := call(context.Background(), conn, "Pay", order("1", "", 0, "")); status.Code(err) != codes.Internal {
		t.Fatalf("unary: %v, want Internal from the recovery interceptor", err)
	}
	cs, err := conn.NewStream(context.Background(), &serviceDesc.Streams[0], svc+"Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("2", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Internal {
		t.Fatalf("stream: %v, want Internal from the recovery interceptor", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []scriptlock.RequestOutcome{scriptlock.RequestLocked, scriptlock.RequestLocked}; !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}
