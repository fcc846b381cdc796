package grpclock_test

import (
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
			wrapping := wrapStream(func(ss grpc.ServerStream) grpc.ServerStream { return &faultStream{ServerStream: ss, v: nil} })
			err := chatAnswer(t, recvThen(tc.op), []grpc.StreamServerInterceptor{recovering, wrapping, grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...)}, id, 10*time.Second)
			if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "panic recovered" {
				t.Fatalf("stream whose wrapper panicked with nil under the lock: %v; want the recovery interceptor's answer, Internal \"panic recovered\", as without the lock", err)
			}
		})
	}
}
