package grpclock_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// panickyLog is a slog handler whose Handle panics, as a user's may.
type panickyLog struct{ slog.Handler }

func (panickyLog) Handle(context.Context, slog.Record) error { panic("log handler panicked") }

// TestStreamPanicLogFaultNotFatal: the panic of a call beneath a locked
// stream's SendMsg is logged on the goroutine grpclock runs that call on;
// a log handler that panics there has the record dropped. It crashed the
// process, where the same panic without the lock reaches the recovery
// interceptor.
func TestStreamPanicLogFaultNotFatal(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var logs syncBuffer
	log := slog.New(panickyLog{slog.NewTextHandler(&logs, nil)})
	got := make(chan any, 1)
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if v := recover(); v != nil {
				got <- v
				err = status.Error(codes.Internal, "recovered")
			}
		}()
		return handler(srv, ss)
	}
	wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, &faultStream{ServerStream: ss, v: errQuota})
	}
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		return st.SendMsg(order("", "", 0, "x"))
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(recovering, wrapping, grpclock.StreamServerInterceptor(locks,
		lockOpts(env, grpclock.WithMethod(svc+"Chat", grpclock.Field("order_id")), grpclock.WithLogger(log))...))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &serviceDesc.Streams[1], svc+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("panic-log-fault", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Internal {
		t.Fatalf("stream whose wrapper panicked: %v, want Internal (the recovery interceptor's)", err)
	}
	if v := <-got; v != errQuota {
		t.Fatalf("recovered %T %v, want the value raised", v, v)
	}
	time.Sleep(200 * time.Millisecond) // the log record is written after the hand-off
}
