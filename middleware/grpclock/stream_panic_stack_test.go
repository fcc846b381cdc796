package grpclock_test

import (
	"errors"
	"fmt"
	"log/slog"
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
// handler's with its own value. The stack the recovery interceptor takes
// names only grpclock's goroutine hand-off, so grpclock logs the stack
// where the wrapper panicked, once, also through two locks on the stream.
// A panic of a handler's own is not logged by grpclock.
func TestStreamPanicKeepsStack(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	got := make(chan any, 4)
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if v := recover(); v != nil {
				got <- v
				err = status.Error(codes.Internal, fmt.Sprint(v))
			}
		}()
		return handler(srv, ss)
	}
	const logged = "panic recovered in a stream call made under the lock"
	for _, tc := range []struct {
		name    string
		wrap    func(grpc.ServerStream) grpc.ServerStream
		handler func(grpc.ServerStream) error
		frame   string // a function on the stack of the original panic
		msg     string
		twice   bool // under two locks
	}{
		{"send", func(ss grpc.ServerStream) grpc.ServerStream { return panickySendStream{ss} },
			func(st grpc.ServerStream) error { return st.SendMsg(order("", "", 0, "x")) },
			"panickySendStream.SendMsg", "stream wrapper panicked", false},
		{"recv", func(ss grpc.ServerStream) grpc.ServerStream { return &panickyRecvStream{ServerStream: ss} },
			func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) },
			"(*panickyRecvStream).RecvMsg", errCodec.Error(), false},
		{"recv under two locks", func(ss grpc.ServerStream) grpc.ServerStream { return &panickyRecvStream{ServerStream: ss} },
			func(st grpc.ServerStream) error { return st.RecvMsg(dynamicpb.NewMessage(orderDesc)) },
			"(*panickyRecvStream).RecvMsg", errCodec.Error(), true},
		{"handler", func(ss grpc.ServerStream) grpc.ServerStream { return ss },
			func(grpc.ServerStream) error { panic("handler panicked") },
			"", "handler panicked", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "panic-stack-" + strings.ReplaceAll(tc.name, " ", "-")
			var logs syncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			chain := []grpc.StreamServerInterceptor{recovering, wrapStream(tc.wrap), grpclock.StreamServerInterceptor(locks,
				lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithLogger(log))...)}
			if tc.twice {
				chain = append(chain, grpclock.StreamServerInterceptor(locks,
					lockOpts(env, grpclock.WithKeyPrefix(env.Prefix+"second:"), grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithLogger(log))...))
			}
			err := chatAnswer(t, recvThen(tc.handler), chain, id, 20*time.Second)
			if status.Code(err) != codes.Internal || status.Convert(err).Message() != tc.msg {
				t.Fatalf("stream that panicked: %v, want Internal %q (the recovery interceptor's, printing the panic as raised)", err, tc.msg)
			}
			v := <-got
			if fmt.Sprint(v) != tc.msg {
				t.Fatalf("recovered %T %v, want the value raised", v, v)
			}
			if tc.frame == "" {
				time.Sleep(100 * time.Millisecond)
				if out := logs.String(); strings.Contains(out, logged) {
					t.Fatalf("a handler's own panic was logged by grpclock:\n%s", out)
				}
				return
			}
			if v != errCodec && tc.msg == errCodec.Error() {
				t.Fatalf("recovered %T %v, want the value raised", v, v)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), logged) {
				if time.Now().After(deadline) {
					t.Fatalf("the panic carried to the handler was not logged:\n%s", logs.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // a second record would be written meanwhile
			out := logs.String()
			if n := strings.Count(out, logged); n != 1 {
				t.Fatalf("the panic was logged %d times, want once:\n%s", n, out)
			}
			if !strings.Contains(out, tc.frame) {
				t.Fatalf("the panic's log does not name %s, where it was raised:\n%s", tc.frame, out)
			}
		})
	}
}
