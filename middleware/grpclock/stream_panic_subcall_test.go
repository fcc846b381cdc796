package grpclock_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// subStream is the server side of a stream a handler opens in process
// with its own context (an in-process channel passing context values):
// its context is derived from the handler's, and its SendMsg panics.
type subStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s subStream) Context() context.Context { return s.ctx }

func (subStream) SendMsg(any) error { panic(errQuota) }

// TestStreamPanicSubCallLogged: a locked stream's handler recovers the
// panic of a SendMsg made under its lock and goes on; it then opens a
// stream in process with its context, locked too, whose SendMsg panics
// with an equal value. That panic, of another call, is logged with the
// stack where it was raised: its lock took the handler's stream for one
// beneath it on the same call, whose carried panic it had already logged,
// and logged nothing.
func TestStreamPanicSubCallLogged(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	sub := grpclock.StreamServerInterceptor(locks, lockOpts(env, grpclock.WithKeyPrefix(env.Prefix+"sub:"),
		grpclock.WithMethod(svc+"Sub", grpclock.Metadata("x-order-id")), grpclock.WithLogger(log))...)
	subDone := make(chan any, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		func() {
			defer func() { _ = recover() }() // the handler recovers its SendMsg's panic
			_ = st.SendMsg(order("", "", 0, "x"))
		}()
		ctx := metadata.NewIncomingContext(st.Context(), metadata.Pairs("x-order-id", "sub-1"))
		func() {
			defer func() { subDone <- recover() }()
			_ = sub(nil, subStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: svc + "Sub", IsServerStream: true},
				func(_ any, ss grpc.ServerStream) error { return ss.SendMsg(order("", "", 0, "y")) })
		}()
		return status.Error(codes.FailedPrecondition, "done")
	}}
	wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, &faultStream{ServerStream: ss, v: errQuota})
	}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(wrapping, grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithLogger(log))...))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("panic-subcall", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("stream: %v, want the handler's FailedPrecondition", err)
	}
	if v := <-subDone; v != errQuota {
		t.Fatalf("in-process stream's handler recovered %T %v, want the value raised", v, v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "subStream.SendMsg") {
		if time.Now().After(deadline) {
			t.Fatalf("the in-process stream's panic was not logged with the stack where it was raised (subStream.SendMsg):\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
