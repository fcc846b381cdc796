package grpclock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// errQuota is a sentinel a stream wrapper panics with, which a recovery
// handler answers by comparing the value it recovered.
var errQuota = errors.New("quota exceeded")

// wrapperFault is a panic value of no error type, which a recovery handler
// recognises by a type switch.
type wrapperFault struct{ reason string }

// faultStream panics, in SendMsg and in RecvMsg after the first message,
// with the value v.
type faultStream struct {
	grpc.ServerStream
	v any
	n int
}

func (s *faultStream) SendMsg(any) error { panic(s.v) }

func (s *faultStream) RecvMsg(m any) error {
	if s.n++; s.n > 1 {
		panic(s.v)
	}
	return s.ServerStream.RecvMsg(m)
}

// TestStreamPanicValueKept: a panic of the call beneath a locked stream's
// SendMsg or RecvMsg reaches the recovery interceptor with the value it
// was raised with, as without the lock, so that a recovery handler that
// compares the value (a sentinel, a type switch, as grpc-ecosystem's
// recovery handlers are written) answers it as it would without the lock.
func TestStreamPanicValueKept(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	// The recovery handler, as grpc-ecosystem's WithRecoveryHandler takes.
	answer := func(p any) error {
		if p == errQuota {
			return status.Error(codes.ResourceExhausted, "quota")
		}
		switch v := p.(type) {
		case wrapperFault:
			return status.Error(codes.FailedPrecondition, v.reason)
		case string:
			return status.Error(codes.Unavailable, v)
		}
		return status.Errorf(codes.Internal, "unexpected panic %T %v", p, p)
	}
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = answer(p)
			}
		}()
		return handler(srv, ss)
	}
	for _, tc := range []struct {
		name string
		v    any
		op   func(grpc.ServerStream) error
		code codes.Code
	}{
		{"send sentinel", errQuota, func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) }, codes.ResourceExhausted},
		{"recv sentinel", errQuota, func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) }, codes.ResourceExhausted},
		{"send struct", wrapperFault{"closed"}, func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) }, codes.FailedPrecondition},
		{"recv string", "draining", func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) }, codes.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "panic-value-" + tc.name
			wrapping := wrapStream(func(ss grpc.ServerStream) grpc.ServerStream { return &faultStream{ServerStream: ss, v: tc.v} })
			err := chatAnswer(t, recvThen(tc.op), []grpc.StreamServerInterceptor{recovering, wrapping, grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...)}, id, 20*time.Second)
			if status.Code(err) != tc.code {
				t.Fatalf("stream whose wrapper panicked with %#v under the lock: %v; want %v, the recovery handler's answer to that value, as without the lock", tc.v, err, tc.code)
			}
		})
	}
}

// recvThen is a Chat server whose handler reads the first message, then
// runs op.
func recvThen(op func(grpc.ServerStream) error) *server {
	return &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		return op(st)
	}}
}

// wrapStream is a stream interceptor that hands the handler the stream
// wrap makes of the one it got.
func wrapStream(wrap func(grpc.ServerStream) grpc.ServerStream) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, wrap(ss))
	}
}

// chatAnswer starts s behind chain, opens a Chat stream, sends order id
// twice (the second for a handler's second RecvMsg) and returns the error
// the client's RecvMsg gets, the call bounded by within.
func chatAnswer(t *testing.T, s *server, chain []grpc.StreamServerInterceptor, id string, within time.Duration) error {
	t.Helper()
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(chain...)})
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order(id, "", 0, "")); err != nil {
		t.Fatal(err)
	}
	_ = cs.SendMsg(order(id, "", 0, "")) // for the second RecvMsg
	return cs.RecvMsg(dynamicpb.NewMessage(orderDesc))
}
