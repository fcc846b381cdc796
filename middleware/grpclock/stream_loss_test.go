package grpclock_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/grpclock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestStreamEndsOnLockLoss: a streaming handler that relies on Send failing
// (as it does when gRPC ends a stream) rather than on its context stops once
// the lock is lost: SendMsg fails with Aborted, and the client gets Aborted,
// not a stream that went on without the lock and ended OK.
func TestStreamEndsOnLockLoss(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	sendErr := make(chan error, 1)
	s := &server{stream: func(st grpc.ServerStream) error {
		req := dynamicpb.NewMessage(orderDesc)
		if err := st.RecvMsg(req); err != nil {
			return err
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+field(req, "order_id").String()).Key())
		for range 100 { // 2 s; the loss is seen within about 0.1 s
			if err := st.SendMsg(order("", "", 0, "tick")); err != nil {
				sendErr <- err
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		sendErr <- nil
		return nil
	}}
	conn := start(t, s, []grpc.ServerOption{grpc.ChainStreamInterceptor(grpclock.StreamServerInterceptor(locks, lockOpts(env)...))})
	cs, err := conn.NewStream(context.Background(), &serviceDesc.Streams[0], svc+"Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(order("lost-stream", "", 0, "")); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	n := 0
	for {
		if err = cs.RecvMsg(dynamicpb.NewMessage(orderDesc)); err != nil {
			break
		}
		n++
	}
	if serr := <-sendErr; status.Code(serr) != codes.Aborted {
		t.Errorf("SendMsg after the lock was lost: %v (after %d messages), want Aborted", serr, n)
	}
	if errors.Is(err, io.EOF) || status.Code(err) != codes.Aborted {
		t.Errorf("stream whose lock was lost: %v after %d messages, want Aborted", err, n)
	}
}
