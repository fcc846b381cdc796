package grpclock_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamPanicNilUnderPanicNil: under GODEBUG=panicnil=1, where
// recover returns nil for panic(nil), a panic(nil) of the call beneath a
// locked stream's SendMsg or RecvMsg goes on on the handler's goroutine, as
// without the lock, so that a recovery interceptor further out answers the
// call. It was taken for runtime.Goexit and ended the handler's goroutine:
// no interceptor further out returned, and the client got no answer.
func TestStreamPanicNilUnderPanicNil(t *testing.T) {
	// Not parallel: GODEBUG is the process's.
	t.Setenv("GODEBUG", "panicnil=1")
	env := mwtest.New(t)
	locks := env.LockFunc()
	// A recovery interceptor that tells a panic, nil or not, from a
	// return: only a panic leaves ran false, and only a panic or a return
	// goes on after the inner func.
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		ran := false
		func() {
			defer func() { _ = recover() }()
			err = handler(srv, ss)
			ran = true
		}()
		if !ran {
			return status.Error(codes.Internal, "panic recovered")
		}
		return err
	}
	for _, tc := range []struct {
		name string
		op   func(grpc.ServerStream) error
	}{
		{"send", func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) }},
		{"recv", func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "panic-nil-" + tc.name
			s := &server{stream: func(st grpc.ServerStream) error {
				if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
					return err
				}
				return tc.op(st)
			}}
			wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
				return handler(srv, &faultStream{ServerStream: ss, v: nil})
			}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(recovering, wrapping, grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
				t.Fatal(err)
			}
			_ = cs.SendMsg(order(id, "", 0, "")) // for the second RecvMsg
			err = cs.RecvMsg(dynamicpb.NewMessage(orderDesc))
			if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "panic recovered" {
				t.Fatalf("stream whose wrapper panicked with nil under the lock: %v; want the recovery interceptor's answer, Internal \"panic recovered\", as without the lock", err)
			}
		})
	}
}
