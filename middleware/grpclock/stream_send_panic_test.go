package grpclock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// panickySendStream is a stream whose SendMsg panics, as one an outer
// interceptor wraps (a codec, a stats hook) may.
type panickySendStream struct{ grpc.ServerStream }

func (panickySendStream) SendMsg(any) error { panic("stream wrapper panicked") }

// TestStreamSendPanicReachesHandler: a SendMsg made while the stream's lock
// is held runs on a goroutine of its own (so that it returns at the lock's
// loss); a panic there goes on on the handler's goroutine, where an outer
// recovery interceptor answers it, instead of crashing the process. The
// lock is released.
func TestStreamSendPanicReachesHandler(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	const id = "send-panic"
	s := &server{stream: func(st grpc.ServerStream) error {
		if err := st.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			return err
		}
		return st.SendMsg(order("", "", 0, "x"))
	}}
	recovering := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = status.Error(codes.Internal, fmt.Sprint(v))
			}
		}()
		return handler(srv, ss)
	}
	wrapping := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, panickySendStream{ss})
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
	if err := cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); status.Code(err) != codes.Internal {
		t.Fatalf("stream whose SendMsg panicked: %v, want Internal (the recovery interceptor's)", err)
	}
	m := env.Mutex(t, env.Prefix+id)
	l, err := m.TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("the stream's lock was not released: %v", err)
	}
	_ = m.Unlock(l)
}
