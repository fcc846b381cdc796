package grpclock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

var errCodec = errors.New("codec exploded")

// panickyRecvStream is a stream whose RecvMsg panics after the first
// message, with an error, as a codec wrapped by an outer interceptor may.
type panickyRecvStream struct {
	grpc.ServerStream
	n int
}

func (s *panickyRecvStream) RecvMsg(m any) error {
	if s.n++; s.n > 1 {
		panic(errCodec)
	}
	return s.ServerStream.RecvMsg(m)
}

// TestStreamPanicKeepsStack: a SendMsg or RecvMsg made under the stream's
// lock runs on a goroutine of its own, and its panic goes on on the
// handler's. The recovery interceptor above gets a *StreamPanic carrying
// the stack where the wrapper panicked (the one it takes itself names only
// grpclock's goroutine hand-off), printing as the original value and
// unwrapping to it when it is an error. A panic of a handler's own is not
// wrapped.
func TestStreamPanicKeepsStack(t *testing.T) {
	env := mwtest.New(t)
	locks := env.LockFunc()
	type caught struct {
		v     any
		stack string
	}
	got := make(chan caught, 4)
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if v := recover(); v != nil {
				got <- caught{v, string(debug.Stack())}
				err = status.Error(codes.Internal, fmt.Sprint(v))
			}
		}()
		return handler(srv, ss)
	}
	for _, tc := range []struct {
		name    string
		wrap    func(grpc.ServerStream) grpc.ServerStream
		handler func(grpc.ServerStream) error
		frame   string // a function on the stack of the original panic
		msg     string
	}{
		{"send", func(ss grpc.ServerStream) grpc.ServerStream { return panickySendStream{ss} },
			func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) },
			"panickySendStream.SendMsg", "stream wrapper panicked"},
		{"recv", func(ss grpc.ServerStream) grpc.ServerStream { return &panickyRecvStream{ServerStream: ss} },
			func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) },
			"(*panickyRecvStream).RecvMsg", errCodec.Error()},
		{"handler", func(ss grpc.ServerStream) grpc.ServerStream { return ss },
			func(grpc.ServerStream) error { panic("handler panicked") },
			"", "handler panicked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "panic-stack-" + tc.name
			s := &server{stream: func(st grpc.ServerStream) error {
				if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
					return err
				}
				return tc.handler(st)
			}}
			wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
				return handler(srv, tc.wrap(ss))
			}
			conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(recovering, wrapping, grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")))...))})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
			if status.Code(err) != codes.Internal || status.Convert(err).Message() != tc.msg {
				t.Fatalf("stream that panicked: %v, want Internal %q (the recovery interceptor's, printing the panic as raised)", err, tc.msg)
			}
			c := <-got
			if tc.frame == "" {
				if _, ok := c.v.(*grpclock.StreamPanic); ok {
					t.Fatalf("handler's own panic was wrapped: %#v", c.v)
				}
				return
			}
			p, ok := c.v.(*grpclock.StreamPanic)
			if !ok {
				t.Fatalf("recovered %T %v, want a *grpclock.StreamPanic carrying the stack that names %s; the recovery's own stack names it: %v",
					c.v, c.v, tc.frame, strings.Contains(c.stack, tc.frame))
			}
			if !strings.Contains(string(p.Stack), tc.frame) {
				t.Fatalf("StreamPanic.Stack does not name %s:\n%s", tc.frame, p.Stack)
			}
			if e, isErr := p.Value.(error); isErr && !errors.Is(p, e) {
				t.Fatalf("StreamPanic of error %v does not unwrap to it", e)
			}
		})
	}
}
